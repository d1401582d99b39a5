# percentiles.gp: gnuplot script for percentiles.dat (written by rtpulse report; edit to restyle).
# Sets no terminal, so choose one when running it from this folder, e.g.
#   gnuplot -e "set terminal pngcairo size 1000,600; set output 'percentiles.png'" percentiles.gp
# x: scenario index (see xtics); y: latency in us
# percentile method: nearest-rank (rank = ceil(p/100*N)); value = upper edge of its log-linear histogram bucket, clamped to the exact max: never below the true sample, at most 0.195% above it (exact below 512 ns)
set encoding utf8
set title 'Latency percentiles per scenario (nearest rank, all threads)'
set xlabel 'Scenario'
set ylabel 'Latency (us)'
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left noenhanced
set logscale y 10
set xrange [*:*]
set yrange [*:*]
set boxwidth 0.16
set style fill solid 0.8 border -1
set xtics ('idle nanosleep' 0, 'cpu_50%%&<x> nanosleep' 1)
set xrange [-0.5:1.5]
plot 'percentiles.dat' index 0 using ($1-0.32):2 with boxes title 'p50', \
     'percentiles.dat' index 1 using ($1-0.16):2 with boxes title 'p99', \
     'percentiles.dat' index 2 using 1:2 with boxes title 'p99.9', \
     'percentiles.dat' index 3 using ($1+0.16):2 with boxes title 'p99.99', \
     'percentiles.dat' index 4 using ($1+0.32):2 with boxes title 'max'
