# Bar charts of a benchmark run (called by scripts/bench.sh):
#   gnuplot -e "latency='plot.dat'; throughput='throughput.dat'; output='latest.png'; subtitle='...'" plot.gp
# latency: a row per scenario, a column of median milliseconds per runtime ("-": none).
# throughput: a row per mode (sequential, 8-way parallel), containers per second per runtime.
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
set linetype 1 lc rgb "#2a9d8f"
set linetype 2 lc rgb "#e9c46a"
set linetype 3 lc rgb "#e76f51"
set linetype 4 lc rgb "#8d99ae"

set multiplot title "Container start-up, busybox /bin/true (".subtitle.")"

set size 0.68,1
set origin 0,0
set title "median wall time per scenario (lower is better)"
set ylabel "ms"
set xtics nomirror
set xrange [-0.6:5.6]
plot for [col=2:5] latency using col:xtic(1)

set size 0.32,1
set origin 0.68,0
set title "throughput (higher is better)"
set ylabel "containers/s"
unset key
set xrange [-0.6:1.6]
plot for [col=2:5] throughput using col:xtic(1)

unset multiplot
