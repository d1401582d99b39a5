#include "results/cyclictest_format.h"
