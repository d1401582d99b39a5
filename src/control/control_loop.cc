#include "control/control_loop.h"
