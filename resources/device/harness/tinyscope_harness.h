/* The table of parameters a TinyEngine training step updates in place.  The device runner's script
 * generates one per export (tinyscope_params.c) from the non-const parameter pointers in the
 * generated genModel.h; harness_main.c dumps those arrays before and after training. */
#ifndef TINYSCOPE_HARNESS_H
#define TINYSCOPE_HARNESS_H

#include <stdint.h>

typedef struct {
    const char *name;  /* parameter name in the graph JSON, e.g. "v9_conv_0_bias" */
    const char *array; /* the generated array it lives in, e.g. "bias24", "offsetRBias25" */
    const char *dtype; /* "int8" or "int32" */
    void *data;
    uint32_t bytes;
} tinyscope_param;

extern const tinyscope_param tinyscope_params[];
extern const uint32_t tinyscope_param_count;

#endif
