/* Tinyscope device-runner harness for TinyEngine's TFLite *inference* code generator
 * (code_generator.CodegenUtilTFlite.GenerateSourceFilesFromTFlite; built by resources/device/engines/tinyengine.sh).
 * It drives the generated genModel.c: getInput() (the first layer's input in the working buffer),
 * invoke(NULL) (every generated layer; what the generator's end2endinference() runs for a model without
 * patches) and getOutput() (genModel.h's NNoutput, the last int8 layer's output).
 *
 * Files, read and written on the host through semihosting (paths relative to QEMU's working folder):
 *   in   inputs.bin         N images back to back, each TS_INPUT_BYTES int8 values in the .tflite input's
 *                           NHWC order; TinyEngine's kernels read the input as HWC (index (y·W + x)·C + c),
 *                           the same order, so the bytes go into getInput() unchanged
 *   out  outputs.bin        N × TS_OUTPUT_BYTES int8, getOutput() after each image (the .tflite output's order)
 *   out  device_report.txt  "key value" lines: images, input_bytes, output_bytes, arena_bytes,
 *                           stack_region_bytes, marks_inference_first, stack_high_water_inference, marks_total, done
 * Instruction counts: each invoke(NULL) is bracketed by tinyscope_mark(k), tinyscope_mark(k + 1), k = 0, 2, 4, …
 * (QEMU's insn_marks plugin records the running instruction count at every call).
 *
 * Build-time definitions (tinyengine.sh derives them from the .tflite and the compiled genModel.o):
 *   TS_INPUT_BYTES   bytes of the model's input tensor (1·H·W·C int8)
 *   TS_OUTPUT_BYTES  bytes of the model's output tensor (int8)
 *   TS_ARENA_BYTES   bytes of the generated code's working buffer (genModel.h's `buffer[PEAK_MEM]`:
 *                    activations + im2col buffer + kernel buffer), as nm reports it in genModel.o
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genNN.h"
#include "tinyscope_device.h"
#include "tinyscope_harness_io.h"

#ifndef TS_INPUT_BYTES
#error "TS_INPUT_BYTES must be defined (bytes of the model's input tensor)"
#endif
#ifndef TS_OUTPUT_BYTES
#error "TS_OUTPUT_BYTES must be defined (bytes of the model's output tensor)"
#endif
#ifndef TS_ARENA_BYTES
#error "TS_ARENA_BYTES must be defined (bytes of the generated code's working buffer)"
#endif


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
    long input_file_bytes = tinyscope_file_size(inputs);
    if (input_file_bytes <= 0 || input_file_bytes % TS_INPUT_BYTES != 0) {
        tinyscope_fail("size is not a positive multiple of the model input's bytes:", "inputs.bin");
    }
    uint32_t images = (uint32_t)(input_file_bytes / TS_INPUT_BYTES);
    FILE *outputs = fopen("outputs.bin", "wb");
    if (!outputs) {
        tinyscope_fail("cannot open for writing", "outputs.bin");
    }
    fprintf(tinyscope_report, "images %lu\ninput_bytes %lu\noutput_bytes %lu\narena_bytes %lu\nstack_region_bytes %lu\n",
            (unsigned long)images, (unsigned long)TS_INPUT_BYTES, (unsigned long)TS_OUTPUT_BYTES,
            (unsigned long)TS_ARENA_BYTES, (unsigned long)tinyscope_stack_size());

    /* Marks 2i and 2i + 1 bracket invoke(NULL) on image i.  The image is read straight into the model's
     * input buffer (no copy of our own) and the output written out before the next image. */
    uint32_t mark = 0, stack_inference = 0;
    for (uint32_t i = 0; i < images; ++i) {
        if (fread(getInput(), 1, TS_INPUT_BYTES, inputs) != TS_INPUT_BYTES) {
            tinyscope_fail("short read from", "inputs.bin");
        }
        tinyscope_stack_paint();
        tinyscope_mark(mark++);
        invoke(NULL);
        tinyscope_mark(mark++);
        uint32_t used = tinyscope_stack_high_water();
        if (used > stack_inference) {
            stack_inference = used;
        }
        if (fwrite(getOutput(), 1, TS_OUTPUT_BYTES, outputs) != TS_OUTPUT_BYTES) {
            tinyscope_fail("short write to", "outputs.bin");
        }
    }
    fclose(outputs);
    fclose(inputs);
    fprintf(tinyscope_report, "marks_inference_first %u\nstack_high_water_inference %lu\nmarks_total %lu\ndone 1\n", 0u,
            (unsigned long)stack_inference, (unsigned long)mark);
    fclose(tinyscope_report);
    printf("tinyscope-harness: %lu images through TinyEngine's generated inference, done\n", (unsigned long)images);
    return 0;
}
