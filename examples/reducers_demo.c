#include <stdio.h>
#include <superstep/superstep.h>
int main(void) {
    printf("%s\n", sst_version());
    return 0;
}
