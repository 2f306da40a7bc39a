/* A state-level file that wrongly reaches up into the run level. */
#include "graph_int.h"
#include "graph_run.h"
