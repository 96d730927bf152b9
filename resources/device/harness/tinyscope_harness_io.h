/* What every Tinyscope harness on the emulated board shares (harness_main.c, tinyengine_infer_main.c,
 * tflm_main.cc): the instruction-count mark, the one-line failure and the size of a semihosted file.
 * Included by exactly one translation unit of a program (it defines tinyscope_mark). */
#ifndef TINYSCOPE_HARNESS_IO_H
#define TINYSCOPE_HARNESS_IO_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runner's QEMU plugin records the instruction count each time this function is entered. */
__attribute__((noinline, used)) void tinyscope_mark(uint32_t id)
{
    __asm__ volatile("" ::"r"(id) : "memory");
}

/* The report being written (device_report.txt), closed with an "error" line by tinyscope_fail. */
static FILE *tinyscope_report;

/* One line "tinyscope-harness: error: WHAT 'FILE'" (the runner reports it), then exit 1. */
static void tinyscope_fail(const char *what, const char *file)
{
    printf("tinyscope-harness: error: %s '%s'\n", what, file);
    if (tinyscope_report) {
        fprintf(tinyscope_report, "error %s %s\n", what, file);
        fclose(tinyscope_report);
    }
    exit(1);
}

/* Bytes of an open file (-1 when it cannot be sought), the position back at its start. */
static long tinyscope_file_size(FILE *f)
{
    if (fseek(f, 0, SEEK_END) != 0) {
        return -1;
    }
    long n = ftell(f);
    if (fseek(f, 0, SEEK_SET) != 0) {
        return -1;
    }
    return n;
}

#ifdef __cplusplus
}
#endif

#endif
