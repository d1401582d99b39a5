# histogram_idle.gp: gnuplot script for histogram_idle.dat (written by rtpulse report; edit to restyle).
# Sets no terminal, so choose one when running it from this folder, e.g.
#   gnuplot -e "set terminal pngcairo size 1000,600; set output 'histogram_idle.png'" histogram_idle.gp
# 1 us classes rebuilt from rtpulse's log-linear histogram: each bucket's count goes to the class of its lower edge (floor(lo_ns/1000)). Buckets are 1 ns wide below 1024 ns and at most 1024 ns wide below 2^20 ns (1.05 ms), so a count can land at most one class low; above that a class may gather several us.
# x: class lower edge in us; y: samples in the class
# x range rule: p99.99 kept between 4 x p99 and 10 x p99, rounded up to a multiple of 10 us: p99 20.5 us, p99.99 617.8 us: x up to 210 us
# classes at or above 210 us are not in this file: 16 samples beyond 210 us (max 617.8 us) not drawn; all classes in histogram_idle_full
set encoding utf8
set title 'Latency histogram, scenario idle: Linux 6.1.0-test, PREEMPT_DYNAMIC (voluntary)'
set xlabel 'Latency (us), 1 us classes; maximum 617.8 us'
set ylabel 'Number of samples'
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top right noenhanced
set logscale y 10
set label 1 '16 samples beyond 210 us (max 617.8 us) not drawn; all classes in histogram_idle_full' at graph 0.01, graph 0.96 left front tc rgb '#b00000'
set xrange [*:210]
set yrange [0.8:*]
plot 'histogram_idle.dat' index 0 using 1:2 with linespoints pt 7 ps 0.4 lw 1.2 title 'CPU 0 (max 616.3 us)', \
     'histogram_idle.dat' index 1 using 1:2 with linespoints pt 7 ps 0.4 lw 1.2 title 'CPU 1 (max 617.8 us)'
