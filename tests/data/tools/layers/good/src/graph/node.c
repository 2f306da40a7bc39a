/* The node level may include the levels below it. */
#include "graph_int.h"
#include "graph_persist.h"
#include "graph_node.h"
