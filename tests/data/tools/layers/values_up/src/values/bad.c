/* A values file that wrongly reaches up into the graph layer. */
#include "../graph/graph_int.h"
#include "superstep/reducer.h"
