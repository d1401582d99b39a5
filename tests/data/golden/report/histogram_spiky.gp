# histogram_spiky.gp: gnuplot script for histogram_spiky.dat (written by rtpulse report; edit to restyle).
# Sets no terminal, so choose one when running it from this folder, e.g.
#   gnuplot -e "set terminal pngcairo size 1000,600; set output 'histogram_spiky.png'" histogram_spiky.gp
# 1 us classes rebuilt from rtpulse's log-linear histogram: each bucket's count goes to the class of its lower edge (floor(lo_ns/1000)). Buckets are 1 ns wide below 1024 ns and at most 1024 ns wide below 2^20 ns (1.05 ms), so a count can land at most one class low; above that a class may gather several us.
# x: class lower edge in us; y: samples in the class
# x range rule: p99.99 kept between 4 x p99 and 10 x p99, rounded up to a multiple of 10 us: p99 59.6 us, p99.99 9502.7 us: x up to 600 us
# classes at or above 600 us are not in this file: 3 samples beyond 600 us (max 15012.3 us) not drawn; all classes in histogram_spiky_full
set encoding utf8
set title 'Latency histogram, scenario spiky: Linux 6.1.0-test, PREEMPT_DYNAMIC (voluntary)'
set xlabel 'Latency (us), 1 us classes; maximum 15012.3 us'
set ylabel 'Number of samples'
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top right noenhanced
set logscale y 10
set label 1 '3 samples beyond 600 us (max 15012.3 us) not drawn; all classes in histogram_spiky_full' at graph 0.01, graph 0.96 left front tc rgb '#b00000'
set xrange [*:600]
set yrange [0.8:*]
plot 'histogram_spiky.dat' index 0 using 1:2 with linespoints pt 7 ps 0.4 lw 1.2 title 'CPU 0 (max 15012.3 us)', \
     'histogram_spiky.dat' index 1 using 1:2 with linespoints pt 7 ps 0.4 lw 1.2 title 'CPU 1 (max 9500.0 us)'
