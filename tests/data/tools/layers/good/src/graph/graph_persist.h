/* fixture: the persist level */
#include "graph_int.h"
