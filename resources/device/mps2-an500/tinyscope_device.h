/* Board services that startup.c provides to the harness (Tinyscope device runner, mps2-an500). */
#ifndef TINYSCOPE_DEVICE_H
#define TINYSCOPE_DEVICE_H

#include <stdint.h>

/* Fill the unused part of the stack region (below the caller's frame) with a known word. */
void tinyscope_stack_paint(void);
/* Bytes of the stack region, counted from its top, that were written since the last paint. */
uint32_t tinyscope_stack_high_water(void);
/* Size of the stack region reserved by link.ld. */
uint32_t tinyscope_stack_size(void);

#endif
