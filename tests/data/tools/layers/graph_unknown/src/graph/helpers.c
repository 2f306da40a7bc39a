/* A new file of src/graph that no level names. */
#include "graph_int.h"
