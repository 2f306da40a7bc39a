/* The draw level, the top, may include any level. */
#include "graph_run.h"
