# histogram_cpu_50___x__full.gp: gnuplot script for histogram_cpu_50___x__full.dat (written by rtpulse report; edit to restyle).
# Sets no terminal, so choose one when running it from this folder, e.g.
#   gnuplot -e "set terminal pngcairo size 1000,600; set output 'histogram_cpu_50___x__full.png'" histogram_cpu_50___x__full.gp
# 1 us classes rebuilt from rtpulse's log-linear histogram: each bucket's count goes to the class of its lower edge (floor(lo_ns/1000)). Buckets are 1 ns wide below 1024 ns and at most 1024 ns wide below 2^20 ns (1.05 ms), so a count can land at most one class low; above that a class may gather several us.
# x: class lower edge in us; y: samples in the class
set encoding utf8
set title 'Latency histogram, scenario cpu_50%&<x>: Linux 6.1.0-test, PREEMPT_DYNAMIC (voluntary) (full range)'
set xlabel 'Latency (us), 1 us classes; maximum 622.8 us'
set ylabel 'Number of samples'
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top right noenhanced
set logscale y 10
set xrange [*:*]
set yrange [0.8:*]
plot 'histogram_cpu_50___x__full.dat' index 0 using 1:2 with linespoints pt 7 ps 0.4 lw 1.2 title 'CPU 0 (max 621.3 us)', \
     'histogram_cpu_50___x__full.dat' index 1 using 1:2 with linespoints pt 7 ps 0.4 lw 1.2 title 'CPU 1 (max 622.8 us)'
