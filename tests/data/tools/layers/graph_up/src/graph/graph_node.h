/* fixture: the node level */
#include "graph_persist.h"
