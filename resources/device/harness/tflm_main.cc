/* Tinyscope device-runner harness for TensorFlow Lite Micro: runs the .tflite model linked into flash
 * (tflm_model.S, symbol tinyscope_model) with TFLM's MicroInterpreter on the emulated board.
 *
 * Files, read and written on the host through semihosting (paths relative to QEMU's working folder):
 *   in   inputs.bin        N inputs back to back, each exactly the model input tensor's bytes (int8, NHWC)
 *   out  outputs.bin       N x output bytes (int8): Invoke() on every input
 *   out  device_report.txt "key value" lines: images, input_bytes, output_bytes, arena_bytes (the arena
 *                          linked in), arena_used_bytes (MicroInterpreter::arena_used_bytes()),
 *                          stack_high_water_inference (max over images), marks_inference_first
 * A model TFLM refuses (an op without a kernel here, an arena too small) ends the program with one line
 * "tinyscope-harness: error: …" and exit 3; TFLM's own messages (MicroPrintf) are printed before it.
 * Instruction counts: every Invoke() is bracketed by tinyscope_mark(); QEMU's insn_marks plugin records
 * the running instruction count at each call (resources/device/qemu-plugin).
 *
 * Build-time definitions (resources/device/engines/tflm.sh):
 *   TS_ARENA_BYTES   the arena, a static array in .bss (default 3 MiB: the board's RAM minus the stack region)
 */
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tinyscope/tflm_ops.h"
#include "tensorflow/lite/schema/schema_generated.h"

extern "C" {
#include "tinyscope_device.h"
}
#include "tinyscope_harness_io.h"

#ifndef TS_ARENA_BYTES
#define TS_ARENA_BYTES (3u * 1024u * 1024u)
#endif

extern "C" const unsigned char tinyscope_model[];
extern "C" const unsigned int tinyscope_model_bytes;

/* The objects main() keeps in function-local statics register their destructors with __cxa_atexit,
 * which names the module by __dso_handle; crtbegin.o (left out by -nostartfiles) would define it. */
extern "C" {
void* __dso_handle = nullptr;
}

/* TFLM's MicroPrintf ends here: printed through semihosting, one line each. */
extern "C" void DebugLog(const char* format, va_list args)
{
    vprintf(format, args);
}

extern "C" int DebugVsnprintf(char* buffer, size_t buf_size, const char* format, va_list vlist)
{
    return vsnprintf(buffer, buf_size, format, vlist);
}

namespace {

alignas(16) uint8_t arena[TS_ARENA_BYTES];

[[noreturn]] void fail(const char* what, long value = -1)
{
    if (value >= 0) {
        printf("tinyscope-harness: error: %s %ld\n", what, value);
    } else {
        printf("tinyscope-harness: error: %s\n", what);
    }
    fflush(stdout);
    exit(3);
}

using tinyscope_tflm::Resolver;


}  // namespace

int main()
{
    const tflite::Model* model = tflite::GetModel(tinyscope_model);
    if (model->version() != TFLITE_SCHEMA_VERSION) fail("the model's schema version is", static_cast<long>(model->version()));

    static Resolver resolver;
    tinyscope_tflm::addOps(resolver);
    static tflite::MicroInterpreter interpreter(model, resolver, arena, sizeof arena);
    if (interpreter.initialization_status() != kTfLiteOk) fail("TFLM refuses the model (initialisation)");
    if (interpreter.AllocateTensors() != kTfLiteOk) fail("TFLM refuses the model in AllocateTensors; arena bytes", static_cast<long>(sizeof arena));
    if (interpreter.inputs_size() != 1 || interpreter.outputs_size() != 1) fail("the model must have one input and one output; inputs:", static_cast<long>(interpreter.inputs_size()));
    TfLiteTensor* input = interpreter.input(0);
    TfLiteTensor* output = interpreter.output(0);
    if (input->type != kTfLiteInt8 || output->type != kTfLiteInt8) fail("the model's input and output must be int8");
    const size_t inBytes = input->bytes, outBytes = output->bytes;

    FILE* inputs = fopen("inputs.bin", "rb");
    if (!inputs) tinyscope_fail("cannot open", "inputs.bin");
    const long total = tinyscope_file_size(inputs);
    if (total <= 0 || total % static_cast<long>(inBytes) != 0) fail("inputs.bin is not a whole number of inputs; bytes", total);
    const uint32_t images = static_cast<uint32_t>(total / static_cast<long>(inBytes));
    FILE* outputs = fopen("outputs.bin", "wb");
    if (!outputs) tinyscope_fail("cannot open for writing", "outputs.bin");

    uint32_t mark = 0, stackBytes = 0;
    for (uint32_t i = 0; i < images; ++i) {
        if (fread(input->data.int8, 1, inBytes, inputs) != inBytes) fail("short read from inputs.bin at image", static_cast<long>(i));
        tinyscope_stack_paint();
        tinyscope_mark(mark++);
        const TfLiteStatus s = interpreter.Invoke();
        tinyscope_mark(mark++);
        const uint32_t used = tinyscope_stack_high_water();
        if (used > stackBytes) stackBytes = used;
        if (s != kTfLiteOk) fail("Invoke() failed on image", static_cast<long>(i));
        if (fwrite(output->data.int8, 1, outBytes, outputs) != outBytes) fail("short write to outputs.bin at image", static_cast<long>(i));
    }
    fclose(outputs);
    fclose(inputs);

    tinyscope_report = fopen("device_report.txt", "w");
    FILE* report = tinyscope_report;
    if (!report) tinyscope_fail("cannot open for writing", "device_report.txt");
    fprintf(report, "images %lu\ninput_bytes %lu\noutput_bytes %lu\narena_bytes %lu\narena_used_bytes %lu\n",
            static_cast<unsigned long>(images), static_cast<unsigned long>(inBytes), static_cast<unsigned long>(outBytes),
            static_cast<unsigned long>(sizeof arena), static_cast<unsigned long>(interpreter.arena_used_bytes()));
    fprintf(report, "stack_high_water_inference %lu\nmarks_inference_first 0\n", static_cast<unsigned long>(stackBytes));
    fclose(report);
    printf("tinyscope-harness: %lu images, arena_used_bytes %lu\n", static_cast<unsigned long>(images),
           static_cast<unsigned long>(interpreter.arena_used_bytes()));
    return 0;
}
