/* A state-level file that wrongly reaches up into the node level. */
#include "graph_int.h"
#include "graph_node.h"
