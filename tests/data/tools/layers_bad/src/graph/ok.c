/* fine */
#include "superstep/value.h"
