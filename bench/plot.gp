# Bar charts of a benchmark run (called by scripts/bench.sh):
#   gnuplot -e "latency='plot.dat'; throughput='throughput.dat'; output='latest.png'; subtitle='...'; \
#               lseries='mini-run crun runc work-floor floor'; tseries='...'; nrows=7" plot.gp
# latency: a row per scenario (nrows of them), a column of median milliseconds per runtime
# ("-": none); throughput: a row per mode (sequential, 8-way parallel), containers per second.
# lseries and tseries name the files' columns in order (a dash for a space): the work floor
# is there only when it was measured, and each runtime keeps its colour either way.
set terminal pngcairo size 1600,600 font "sans,11"
set output output
set datafile missing "-"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key at screen 0.5, screen 0.92 center horizontal autotitle columnhead samplen 2 width 2
set grid ytics
set yrange [0:*]
set tmargin 6
colour(name) = name eq "mini-run" ? "#2a9d8f" : name eq "crun" ? "#e9c46a" : \
    name eq "runc" ? "#e76f51" : name eq "work-floor" ? "#6d597a" : "#8d99ae"

set multiplot title "Container start-up, busybox /bin/true (".subtitle.")"

set size 0.68,1
set origin 0,0
set title "median wall time per scenario (lower is better)"
set ylabel "ms"
set xtics nomirror
set xrange [-0.6:nrows-0.4]
plot for [i=1:words(lseries)] latency using i+1:xtic(1) lc rgb colour(word(lseries, i))

set size 0.32,1
set origin 0.68,0
set title "throughput (higher is better)"
set ylabel "containers/s"
unset key
set xrange [-0.6:1.6]
plot for [i=1:words(tseries)] throughput using i+1:xtic(1) lc rgb colour(word(tseries, i))

unset multiplot
