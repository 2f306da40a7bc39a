/* fixture: the run level */
#include "graph_persist.h"
