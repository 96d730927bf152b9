/* A hostile program for the emulated board (test_device_run's sandbox test, issue 45): through
 * semihosting it tries to reach the host outside its run folder — create, write, read, remove and
 * rename files there — and records in its own run folder what each attempt returned. OUTSIDE is a
 * file the test creates beside the run folder (its absolute path, given at compile time).
 * Built by the test with arm-none-eabi-gcc, newlib's rdimon and the project's startup code. */
#include <stdio.h>

#ifndef OUTSIDE
#error "compile with -DOUTSIDE=\"/absolute/path\""
#endif

static FILE* report;

static void attempt(const char* what, int succeeded)
{
    fprintf(report, "%s %d\n", what, succeeded);
}

int main(void)
{
    report = fopen("result.txt", "w");   /* inside: must work */
    if (!report) return 3;
    FILE* f;
    f = fopen("../escape-relative.txt", "w");
    attempt("create_parent", f != NULL);
    if (f) { fputs("escaped\n", f); fclose(f); }
    f = fopen(OUTSIDE ".new", "w");
    attempt("create_absolute", f != NULL);
    if (f) { fputs("escaped\n", f); fclose(f); }
    f = fopen(OUTSIDE, "a");
    attempt("append_existing", f != NULL);
    if (f) { fputs("escaped\n", f); fclose(f); }
    f = fopen(OUTSIDE, "r");
    attempt("read_outside", f != NULL);
    if (f) fclose(f);
    f = fopen("/etc/hostname", "r");
    attempt("read_etc", f != NULL);
    if (f) fclose(f);
    attempt("remove_outside", remove(OUTSIDE) == 0);
    f = fopen("inside.txt", "w");
    attempt("create_inside", f != NULL);
    if (f) { fputs("inside\n", f); fclose(f); }
    attempt("rename_out", rename("inside.txt", "../moved-out.txt") == 0);
    fclose(report);
    return 0;
}
