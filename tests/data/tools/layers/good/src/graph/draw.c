/* The draw level, the top, may include any level. */
#include "graph_node.h"
