#include "control/flight_controller.h"
