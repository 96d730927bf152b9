/* Tinyscope device-runner harness: drives the code TinyEngine's training code generator writes
 * (genModel.c: invoke_inf(), invoke(float *labels), getInput(), getOutput()) on the emulated board.
 *
 * Files, read and written on the host through semihosting (paths relative to QEMU's working folder):
 *   in   inputs.bin        N images, each TS_INPUT_BYTES int8 values in the layout getInput() expects
 *   in   labels.bin        K bytes (may be empty): training step k uses image k % N and class labels[k]
 *   out  logits.bin        N x TS_NUM_CLASSES int8: invoke_inf() on every image, before any training
 *   out  params_before.bin the parameters a training step updates, concatenated in table order
 *   out  params_after.bin  the same arrays after the K training steps
 *   out  params_steps.bin  the same arrays after each step, K dumps one after the other
 *   out  logits_after.bin  N x TS_NUM_CLASSES int8 after training (only when K > 0)
 *   out  device_report.txt "key value" lines: counts, stack high-water marks, parameter table
 * Instruction counts: every measured call is bracketed by tinyscope_mark(); QEMU's insn_marks
 * plugin records the running instruction count at each call (see resources/device/qemu-plugin).
 *
 * Build-time definitions (the runner's script derives them from the export's graph JSON):
 *   TS_INPUT_BYTES   bytes of the graph input (1*C*H*W int8)
 *   TS_NUM_CLASSES   length of the graph's label / logits vector
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genNN.h"
#include "tinyscope_device.h"
#include "tinyscope_harness_io.h"
#include "tinyscope_harness.h"

#ifndef TS_INPUT_BYTES
#error "TS_INPUT_BYTES must be defined (bytes of the graph input)"
#endif
#ifndef TS_NUM_CLASSES
#error "TS_NUM_CLASSES must be defined (length of the logits vector)"
#endif

static unsigned mark_counter;

static void write_file(const char *path, const void *data, size_t bytes)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        tinyscope_fail("cannot open for writing", path);
    }
    if (bytes && fwrite(data, 1, bytes, f) != bytes) {
        tinyscope_fail("short write to", path);
    }
    fclose(f);
}

static void write_params(FILE *f, const char *path)
{
    for (uint32_t i = 0; i < tinyscope_param_count; ++i) {
        if (fwrite(tinyscope_params[i].data, 1, tinyscope_params[i].bytes, f) != tinyscope_params[i].bytes) {
            tinyscope_fail("short write to", path);
        }
    }
}

static void dump_params(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        tinyscope_fail("cannot open for writing", path);
    }
    write_params(f, path);
    fclose(f);
}

/* Image i goes straight into the model's input buffer: the harness keeps no image copy of its own, so
 * the static RAM the board reports is the generated code's plus newlib's. */
static void load_image(FILE *inputs, uint32_t i)
{
    if (fseek(inputs, (long)i * TS_INPUT_BYTES, SEEK_SET) != 0 ||
        fread(getInput(), 1, TS_INPUT_BYTES, inputs) != TS_INPUT_BYTES) {
        tinyscope_fail("short read from", "inputs.bin");
    }
}

static void run_inference(FILE *inputs, uint32_t i, int8_t *logits, uint32_t *stack_bytes)
{
    load_image(inputs, i);
    tinyscope_stack_paint();
    tinyscope_mark(mark_counter++);
    invoke_inf();
    tinyscope_mark(mark_counter++);
    uint32_t used = tinyscope_stack_high_water();
    if (used > *stack_bytes) {
        *stack_bytes = used;
    }
    memcpy(logits, getOutput(), TS_NUM_CLASSES);
}

int main(void)
{
    tinyscope_report = fopen("device_report.txt", "w");
    if (!tinyscope_report) {
        tinyscope_fail("cannot open for writing", "device_report.txt");
    }

    FILE *inputs = fopen("inputs.bin", "rb");
    if (!inputs) {
        tinyscope_fail("cannot open", "inputs.bin");
    }
    long input_bytes = tinyscope_file_size(inputs);
    if (input_bytes <= 0 || input_bytes % TS_INPUT_BYTES != 0) {
        tinyscope_fail("size is not a positive multiple of the graph input's bytes:", "inputs.bin");
    }
    uint32_t images = (uint32_t)(input_bytes / TS_INPUT_BYTES);

    uint8_t *labels = NULL;
    uint32_t steps = 0;
    FILE *label_file = fopen("labels.bin", "rb");
    if (label_file) {
        long n = tinyscope_file_size(label_file);
        if (n < 0 || n > 65536) {
            tinyscope_fail("unreadable or longer than 65536 steps:", "labels.bin");
        }
        steps = (uint32_t)n;
        labels = malloc(steps ? steps : 1);
        if (!labels) {
            tinyscope_fail("out of heap for", "labels.bin");
        }
        if (steps && fread(labels, 1, steps, label_file) != steps) {
            tinyscope_fail("short read from", "labels.bin");
        }
        fclose(label_file);
        for (uint32_t k = 0; k < steps; ++k) {
            if (labels[k] >= TS_NUM_CLASSES) {
                tinyscope_fail("label out of range in", "labels.bin");
            }
        }
    }

    fprintf(tinyscope_report, "images %lu\nsteps %lu\ninput_bytes %lu\nnum_classes %lu\nstack_region_bytes %lu\n",
            (unsigned long)images, (unsigned long)steps, (unsigned long)TS_INPUT_BYTES,
            (unsigned long)TS_NUM_CLASSES, (unsigned long)tinyscope_stack_size());
    for (uint32_t i = 0; i < tinyscope_param_count; ++i) {
        fprintf(tinyscope_report, "param %s %s %s %lu\n", tinyscope_params[i].name, tinyscope_params[i].array,
                tinyscope_params[i].dtype, (unsigned long)tinyscope_params[i].bytes);
    }
    dump_params("params_before.bin");

    int8_t *logits = malloc((size_t)images * TS_NUM_CLASSES);
    if (!logits) {
        tinyscope_fail("out of heap for logits of", "inputs.bin");
    }

    /* Inference on every image.  Marks 2i and 2i+1 bracket invoke_inf() on image i. */
    uint32_t stack_inference = 0;
    for (uint32_t i = 0; i < images; ++i) {
        run_inference(inputs, i, logits + (size_t)i * TS_NUM_CLASSES, &stack_inference);
    }
    write_file("logits.bin", logits, (size_t)images * TS_NUM_CLASSES);
    fprintf(tinyscope_report, "marks_inference_first %u\n", 0u);
    fprintf(tinyscope_report, "stack_high_water_inference %lu\n", (unsigned long)stack_inference);

    /* Training steps.  Marks bracket each invoke(labels).  After each step the updated arrays are
     * appended to params_steps.bin (K x the table's bytes), so every step can be checked from the
     * device's own starting point. */
    uint32_t stack_training = 0;
    fprintf(tinyscope_report, "marks_training_first %u\n", mark_counter);
    FILE *step_dump = fopen("params_steps.bin", "wb");
    if (!step_dump) {
        tinyscope_fail("cannot open for writing", "params_steps.bin");
    }
    for (uint32_t k = 0; k < steps; ++k) {
        load_image(inputs, k % images);
        /* invoke() takes the label as a one-hot float vector (the graph's "label" input, float32 [1,K]). */
        float one_hot[TS_NUM_CLASSES];
        for (uint32_t c = 0; c < TS_NUM_CLASSES; ++c) {
            one_hot[c] = (c == labels[k]) ? 1.0f : 0.0f;
        }
        tinyscope_stack_paint();
        tinyscope_mark(mark_counter++);
        invoke(one_hot);
        tinyscope_mark(mark_counter++);
        uint32_t used = tinyscope_stack_high_water();
        if (used > stack_training) {
            stack_training = used;
        }
        write_params(step_dump, "params_steps.bin");
    }
    fclose(step_dump);
    fprintf(tinyscope_report, "stack_high_water_training %lu\n", (unsigned long)stack_training);
    dump_params("params_after.bin");

    if (steps > 0) {
        uint32_t ignored = 0;
        fprintf(tinyscope_report, "marks_inference_after_first %u\n", mark_counter);
        for (uint32_t i = 0; i < images; ++i) {
            run_inference(inputs, i, logits + (size_t)i * TS_NUM_CLASSES, &ignored);
        }
        write_file("logits_after.bin", logits, (size_t)images * TS_NUM_CLASSES);
    }
    fclose(inputs);
    fprintf(tinyscope_report, "marks_total %u\ndone 1\n", mark_counter);
    fclose(tinyscope_report);
    printf("tinyscope-harness: %lu images, %lu training steps, done\n", (unsigned long)images, (unsigned long)steps);
    return 0;
}
