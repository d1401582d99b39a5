# exceedance.gp: gnuplot script for exceedance.dat (written by rtpulse report; edit to restyle).
# Sets no terminal, so choose one when running it from this folder, e.g.
#   gnuplot -e "set terminal pngcairo size 1000,600; set output 'exceedance.png'" exceedance.gp
# exceedance (1 - CDF) at each non-empty log-linear bucket's upper edge (exact there); first point (min, 1); the point at the max (fraction 0) is left out for the log axis
set encoding utf8
set title 'Exceedance, all scenarios (all threads): Linux 6.1.0-test, PREEMPT_DYNAMIC (voluntary)'
set xlabel 'Latency x (us)'
set ylabel 'P(latency > x)'
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top right noenhanced
set logscale x 10
set logscale y 10
set xrange [*:*]
set yrange [*:*]
plot 'exceedance.dat' index 0 using 1:2 with lines lw 1.5 title 'idle (N=4042)', \
     'exceedance.dat' index 1 using 1:2 with lines lw 1.5 title 'cpu_50%&<x> (N=4042)'
