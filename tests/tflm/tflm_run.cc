// tflm_run MODEL.tflite INPUTS.bin N [--arena BYTES]
//
// Runs a TFLite flatbuffer with TensorFlow Lite Micro's interpreter and reference kernels (the
// tflm_host library, compiled from ../shared/reference/runtimes) on N inputs and prints one JSON
// object: the input and output tensors (shape, type, scale, zero point), the op list,
// arena_used_bytes() and, per image, the output values and the Invoke() time. INPUTS.bin holds the
// N input tensors back to back, each exactly the input tensor's bytes (int8 for an int8 model).
//
// Bad input (unreadable or corrupt model, a model TFLM refuses, an arena too small, an inputs file
// of the wrong size, bad arguments): one line on stderr, exit 2. TFLM reports its reasons through
// MicroPrintf -> DebugLog; the DebugLog below (the host's, replacing TFLM's debug_log.cc) collects
// them so they end up in that one line, and echoes them to stderr when the run succeeds anyway.
// See docs/DEPLOY.md "TensorFlow Lite Micro on the host".
#include "tensorflow/lite/micro/debug_log.h"
#include "tensorflow/lite/micro/memory_planner/greedy_memory_planner.h"
#include "tensorflow/lite/micro/micro_allocator.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tinyscope/tflm_ops.h"
#include "tensorflow/lite/micro/recording_micro_interpreter.h"
#include "tensorflow/lite/schema/schema_generated.h"
#include "tensorflow/lite/schema/schema_utils.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

std::string& tflmLog() {
  static std::string log;
  return log;
}

}  // namespace

extern "C" void DebugLog(const char* format, va_list args) {
  char buffer[1024];
  std::vsnprintf(buffer, sizeof buffer, format, args);
  tflmLog() += buffer;
}

extern "C" int DebugVsnprintf(char* buffer, size_t buf_size, const char* format, va_list vlist) {
  return std::vsnprintf(buffer, buf_size, format, vlist);
}

namespace {

constexpr std::size_t kMaxModelBytes = std::size_t(256) << 20;
constexpr std::size_t kMaxArenaBytes = std::size_t(1) << 30;
constexpr std::size_t kDefaultArenaBytes = std::size_t(2) << 20;
constexpr long long kMaxImages = 1000000;

// TFLM's collected messages as one line: "a; b; c" (MicroPrintf ends each with "\r\n").
std::string tflmMessages() {
  std::string out;
  std::string line;
  auto flush = [&] {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (!line.empty()) out += (out.empty() ? "" : "; ") + line;
    line.clear();
  };
  for (char c : tflmLog()) {
    if (c == '\r' || c == '\n') flush();
    else line += c;
  }
  flush();
  return out.empty() ? "no message from TFLM" : out;
}

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "tflm_run: error: %s\n", message.c_str());
  std::exit(2);
}

[[noreturn]] void failTflm(const std::string& message, TfLiteStatus status) {
  fail(message + " (TfLiteStatus " + std::to_string(static_cast<int>(status)) + "): " + tflmMessages());
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<std::uint8_t, FreeDeleter>;

// 16-byte aligned storage (TFLM expects aligned flatbuffers and arenas).
AlignedBytes alignedBytes(std::size_t size) {
  const std::size_t rounded = (size + 15) / 16 * 16;
  void* p = std::aligned_alloc(16, rounded == 0 ? 16 : rounded);
  if (!p) fail("out of memory allocating " + std::to_string(size) + " bytes");
  return AlignedBytes(static_cast<std::uint8_t*>(p));
}

std::vector<char> readFile(const std::string& path, std::size_t limit, const char* what) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) fail(path + ": cannot open the " + what + " file: " + std::strerror(errno));
  const std::streamoff size = in.tellg();
  if (size < 0) fail(path + ": cannot read the " + what + " file");
  if (static_cast<std::size_t>(size) > limit)
    fail(path + ": the " + what + " file has " + std::to_string(size) + " bytes, more than the limit of " +
         std::to_string(limit));
  std::vector<char> bytes(static_cast<std::size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(bytes.data(), size)) fail(path + ": cannot read the " + what + " file");
  return bytes;
}

long long parseCount(const std::string& text, const char* what, long long min, long long max) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min || value > max)
    fail(std::string("bad ") + what + " '" + text + "': expected an integer from " + std::to_string(min) +
         " to " + std::to_string(max));
  return value;
}

const char* typeName(TfLiteType type) {
  switch (type) {
    case kTfLiteInt8: return "int8";
    case kTfLiteUInt8: return "uint8";
    case kTfLiteInt16: return "int16";
    case kTfLiteInt32: return "int32";
    case kTfLiteInt64: return "int64";
    case kTfLiteFloat32: return "float32";
    case kTfLiteBool: return "bool";
    default: return "other";
  }
}

nlohmann::json describe(const TfLiteTensor& t) {
  nlohmann::json shape = nlohmann::json::array();
  for (int i = 0; i < t.dims->size; ++i) shape.push_back(t.dims->data[i]);
  return {{"shape", shape}, {"type", typeName(t.type)}, {"bytes", t.bytes},
          {"scale", t.params.scale}, {"zero_point", t.params.zero_point}};
}

nlohmann::json values(const TfLiteTensor& t) {
  nlohmann::json out = nlohmann::json::array();
  auto add = [&](auto* data) {
    for (std::size_t i = 0; i < t.bytes / sizeof(*data); ++i) out.push_back(data[i]);
  };
  switch (t.type) {
    case kTfLiteInt8: add(t.data.int8); break;
    case kTfLiteUInt8: add(t.data.uint8); break;
    case kTfLiteInt16: add(t.data.i16); break;
    case kTfLiteInt32: add(t.data.i32); break;
    case kTfLiteFloat32: add(t.data.f); break;
    default: fail(std::string("output tensor of type ") + typeName(t.type) + " cannot be printed");
  }
  return out;
}

// TFLM's greedy memory planner, recording what the allocator asks of it: one buffer per tensor that
// needs arena space (in tensor index order), then one per scratch buffer a kernel requested, each with
// its size (aligned to 16) and lifetime in TFLM's allocation scopes (the graph input at 0, op i at i + 1).
class PlanRecorder : public tflite::GreedyMemoryPlanner {
 public:
  struct Buffer {
    int size, first, last;
  };
  TfLiteStatus AddBuffer(int size, int first_time_used, int last_time_used) override {
    buffers.push_back({size, first_time_used, last_time_used});
    return GreedyMemoryPlanner::AddBuffer(size, first_time_used, last_time_used);
  }
  TfLiteStatus AddBuffer(int size, int first_time_used, int last_time_used, int offline_offset) override {
    buffers.push_back({size, first_time_used, last_time_used});
    return GreedyMemoryPlanner::AddBuffer(size, first_time_used, last_time_used, offline_offset);
  }
  // The allocator asks while it plans; afterwards the planner's working lists (in the arena's free
  // part) are gone, so the answer is kept here.
  size_t GetMaximumMemorySize() override {
    planned = GreedyMemoryPlanner::GetMaximumMemorySize();
    return planned;
  }
  std::vector<Buffer> buffers;
  size_t planned = 0;
  // TFLM hides operator delete (TF_LITE_REMOVE_VIRTUAL_DELETE); a class with a virtual destructor
  // compiled with exceptions needs one it can reach. This object lives on the stack: never called.
  static void operator delete(void* p) { ::operator delete(p); }
};

// Where the head goes, op by op: the planner's buffers named (tensors by their name in the file,
// scratch buffers by the op that asked), the bytes live during each op (its inputs, outputs and
// scratch, plus every activation kept for a later op), and the op where that sum is largest. The
// planned head can only be larger than that peak (fragmentation of the greedy placement).
nlohmann::json memoryPlan(const tflite::Model* model, const nlohmann::json& ops, PlanRecorder& planner) {
  const auto* subgraph = model->subgraphs()->Get(0);
  const auto* buffers = model->buffers();
  std::vector<int> arenaTensors;   // the tensors that need arena space, in the allocator's order
  for (std::size_t i = 0; i < subgraph->tensors()->size(); ++i) {
    const auto* t = subgraph->tensors()->Get(i);
    const bool constant = buffers && t->buffer() < buffers->size() && buffers->Get(t->buffer())->data() &&
                          buffers->Get(t->buffer())->data()->size() > 0;
    if (!constant && !t->is_variable()) arenaTensors.push_back(static_cast<int>(i));
  }
  const int scopes = static_cast<int>(ops.size()) + 1;
  std::vector<long long> live(static_cast<std::size_t>(scopes), 0);
  nlohmann::json named = nlohmann::json::array();
  std::size_t tensorSlot = 0;
  for (const auto& b : planner.buffers) {
    nlohmann::json entry = {{"bytes", b.size}, {"first_op", b.first - 1}, {"last_op", b.last - 1}};
    // Zero-byte tensors are not planned, so skip candidates until the size matches.
    while (tensorSlot < arenaTensors.size()) {
      const auto* t = subgraph->tensors()->Get(arenaTensors[tensorSlot]);
      std::size_t bytes = 1;
      if (t->shape())
        for (int d : *t->shape()) bytes *= static_cast<std::size_t>(d);
      if (t->type() == tflite::TensorType_INT32 || t->type() == tflite::TensorType_FLOAT32) bytes *= 4;
      ++tensorSlot;
      if (bytes > 0 && static_cast<int>((bytes + 15) / 16 * 16) == b.size) {
        entry["tensor"] = t->name() ? t->name()->str() : "tensor " + std::to_string(arenaTensors[tensorSlot - 1]);
        break;
      }
    }
    if (!entry.contains("tensor")) entry["scratch_of_op"] = b.first - 1;
    for (int s = std::max(b.first, 0); s <= std::min(b.last, scopes - 1); ++s) live[static_cast<std::size_t>(s)] += b.size;
    named.push_back(entry);
  }
  int peakScope = 0;
  for (int s = 1; s < scopes; ++s)
    if (live[static_cast<std::size_t>(s)] > live[static_cast<std::size_t>(peakScope)]) peakScope = s;
  nlohmann::json atPeak = nlohmann::json::array();
  for (const auto& e : named)
    if (e["first_op"].get<int>() + 1 <= peakScope && peakScope <= e["last_op"].get<int>() + 1) atPeak.push_back(e);
  nlohmann::json perOp = nlohmann::json::array();
  for (int s = 1; s < scopes; ++s) perOp.push_back(live[static_cast<std::size_t>(s)]);
  return {{"planned_bytes", planner.planned},
          {"live_peak_bytes", live[static_cast<std::size_t>(peakScope)]},
          {"live_peak_op", peakScope - 1},
          {"live_peak_op_type", peakScope >= 1 ? ops[static_cast<std::size_t>(peakScope - 1)] : nlohmann::json("input")},
          {"live_at_peak", atPeak},
          {"live_bytes_per_op", perOp},
          {"buffers", named}};
}

using Resolver = tinyscope_tflm::Resolver;
using tinyscope_tflm::addOps;

}  // namespace

int main(int argc, char** argv) {
  const std::string usage = "usage: tflm_run MODEL.tflite INPUTS.bin N [--arena BYTES]";
  std::vector<std::string> positional;
  std::size_t arenaBytes = kDefaultArenaBytes;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--arena") {
      if (i + 1 >= argc) fail("--arena needs a byte count; " + usage);
      arenaBytes = static_cast<std::size_t>(parseCount(argv[++i], "--arena", 16, kMaxArenaBytes));
    } else if (arg.size() > 1 && arg[0] == '-') {
      fail("unknown option '" + arg + "'; " + usage);
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 3) fail(usage);
  const std::string modelPath = positional[0];
  const std::string inputsPath = positional[1];
  const long long images = parseCount(positional[2], "N", 1, kMaxImages);

  // The model, verified as a TFLite flatbuffer before TFLM reads it (TFLM itself trusts the bytes).
  const std::vector<char> file = readFile(modelPath, kMaxModelBytes, "model");
  AlignedBytes modelBytes = alignedBytes(file.size());
  if (!file.empty()) std::memcpy(modelBytes.get(), file.data(), file.size());
  {
    flatbuffers::Verifier verifier(modelBytes.get(), file.size());
    if (file.size() < 8 || !tflite::ModelBufferHasIdentifier(modelBytes.get()))
      fail(modelPath + ": not a TFLite flatbuffer (no \"TFL3\" file identifier at byte 4)");
    if (!tflite::VerifyModelBuffer(verifier))
      fail(modelPath + ": corrupt TFLite flatbuffer (the flatbuffers verifier rejects it)");
  }
  const tflite::Model* model = tflite::GetModel(modelBytes.get());
  if (model->version() != TFLITE_SCHEMA_VERSION)
    fail(modelPath + ": schema version " + std::to_string(model->version()) + ", TFLM supports " +
         std::to_string(TFLITE_SCHEMA_VERSION));
  if (!model->subgraphs() || model->subgraphs()->size() == 0) fail(modelPath + ": the model has no subgraph");

  nlohmann::json ops = nlohmann::json::array();
  const auto* subgraph = model->subgraphs()->Get(0);
  if (subgraph->operators()) {
    for (const auto* op : *subgraph->operators()) {
      const auto* codes = model->operator_codes();
      if (!codes || op->opcode_index() >= codes->size())
        fail(modelPath + ": operator refers to opcode " + std::to_string(op->opcode_index()) + ", which is absent");
      const auto code = tflite::GetBuiltinCode(codes->Get(op->opcode_index()));
      const char* name = tflite::EnumNameBuiltinOperator(code);
      ops.push_back(name && *name ? std::string(name) : "BUILTIN_" + std::to_string(static_cast<int>(code)));
    }
  }

  Resolver resolver;
  addOps(resolver);
  AlignedBytes arena = alignedBytes(arenaBytes);
  tflite::MicroInterpreter interpreter(model, resolver, arena.get(), arenaBytes);
  if (interpreter.initialization_status() != kTfLiteOk)
    failTflm(modelPath + ": TFLM refuses the model", interpreter.initialization_status());
  if (const TfLiteStatus s = interpreter.AllocateTensors(); s != kTfLiteOk)
    failTflm(modelPath + ": TFLM refuses the model in AllocateTensors, with an arena of " +
             std::to_string(arenaBytes) + " bytes", s);
  if (interpreter.inputs_size() != 1 || interpreter.outputs_size() != 1)
    fail(modelPath + ": the model has " + std::to_string(interpreter.inputs_size()) + " inputs and " +
         std::to_string(interpreter.outputs_size()) + " outputs; tflm_run runs models with one of each");
  TfLiteTensor* input = interpreter.input(0);
  TfLiteTensor* output = interpreter.output(0);

  const std::vector<char> inputs = readFile(inputsPath, kMaxModelBytes * 16, "inputs");
  const std::size_t expected = static_cast<std::size_t>(images) * input->bytes;
  if (inputs.size() != expected)
    fail(inputsPath + ": " + std::to_string(inputs.size()) + " bytes, expected " + std::to_string(images) +
         " x " + std::to_string(input->bytes) + " = " + std::to_string(expected) + " bytes (" +
         std::to_string(images) + " input tensor(s) of " + describe(*input)["shape"].dump() + " " +
         typeName(input->type) + ")");

  nlohmann::json outputs = nlohmann::json::array();
  nlohmann::json invokeUs = nlohmann::json::array();
  for (long long i = 0; i < images; ++i) {
    std::memcpy(input->data.raw, inputs.data() + static_cast<std::size_t>(i) * input->bytes, input->bytes);
    const auto start = std::chrono::steady_clock::now();
    const TfLiteStatus s = interpreter.Invoke();
    const auto stop = std::chrono::steady_clock::now();
    if (s != kTfLiteOk) failTflm(modelPath + ": TFLM's Invoke fails on image " + std::to_string(i), s);
    invokeUs.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
    outputs.push_back(values(*output));
  }

  // The least arena AllocateTensors accepts, by bisection between arena_used_bytes and the given
  // size. It is larger than arena_used_bytes: while planning, TFLM's greedy memory planner keeps its
  // working lists in the free part of the arena (per buffer: requirements, offsets, order), which
  // arena_used_bytes does not count once planning is done.
  const std::string runLog = tflmLog();
  auto allocates = [&](std::size_t bytes) {
    AlignedBytes trial = alignedBytes(bytes);
    tflite::MicroInterpreter t(model, resolver, trial.get(), bytes);
    return t.initialization_status() == kTfLiteOk && t.AllocateTensors() == kTfLiteOk;
  };
  std::size_t fails = interpreter.arena_used_bytes() - 1, works = arenaBytes;
  if (allocates(fails + 1)) works = fails + 1;
  while (works - fails > 1) {
    const std::size_t mid = fails + (works - fails) / 2;
    (allocates(mid) ? works : fails) = mid;
  }
  const std::size_t minArenaBytes = works;
  tflmLog().clear();

  // Where the arena goes: the same model allocated once more by TFLM's RecordingMicroInterpreter.
  // Its head (planned activations and scratch buffers) equals the run's; its tail holds the same
  // persistent records plus the recording allocator's own, slightly larger bookkeeping objects.
  // It gets 64 KiB more arena for those objects; should it still fail, the breakdown is null and
  // TFLM's reason goes to stderr (the run itself succeeded).
  nlohmann::json breakdown;
  const std::size_t recordingBytes = arenaBytes + (std::size_t(64) << 10);
  AlignedBytes recordingArena = alignedBytes(recordingBytes);
  tflite::RecordingMicroInterpreter recording(model, resolver, recordingArena.get(), recordingBytes);
  if (recording.AllocateTensors() != kTfLiteOk) {
    std::fprintf(stderr, "tflm_run: no arena breakdown: TFLM's RecordingMicroInterpreter fails: %s\n",
                 tflmMessages().c_str());
  } else {
    const auto& allocator = recording.GetMicroAllocator();
    const auto* arenaAllocator = allocator.GetSimpleMemoryAllocator();
    auto used = [&](tflite::RecordedAllocationType type) {
      const tflite::RecordedAllocation a = allocator.GetRecordedAllocation(type);
      return nlohmann::json{{"bytes", a.used_bytes}, {"count", a.count}};
    };
    breakdown = {
        {"head_bytes", arenaAllocator->GetNonPersistentUsedBytes()},
        {"tail_bytes", arenaAllocator->GetPersistentUsedBytes()},
        {"recording_arena_used_bytes", recording.arena_used_bytes()},
        {"eval_tensors", used(tflite::RecordedAllocationType::kTfLiteEvalTensorData)},
        {"persistent_tflite_tensors", used(tflite::RecordedAllocationType::kPersistentTfLiteTensorData)},
        {"quantization_data", used(tflite::RecordedAllocationType::kPersistentTfLiteTensorQuantizationData)},
        {"persistent_buffers", used(tflite::RecordedAllocationType::kPersistentBufferData)},
        {"variable_tensors", used(tflite::RecordedAllocationType::kTfLiteTensorVariableBufferData)},
        {"nodes_and_registrations", used(tflite::RecordedAllocationType::kNodeAndRegistrationArray)},
        {"op_data", used(tflite::RecordedAllocationType::kOpData)},
    };
  }

  // The head, op by op: the same model allocated with a planner that records its buffers.
  nlohmann::json plan;
  {
    PlanRecorder planner;
    AlignedBytes planArena = alignedBytes(arenaBytes);
    tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create(planArena.get(), arenaBytes, &planner);
    tflite::MicroInterpreter planned(model, resolver, allocator);
    if (!allocator || planned.AllocateTensors() != kTfLiteOk)
      std::fprintf(stderr, "tflm_run: no memory plan: TFLM's allocator fails: %s\n", tflmMessages().c_str());
    else
      plan = memoryPlan(model, ops, planner);
  }
  tflmLog() = runLog;

  // What TFLM logged on a successful run (warnings) still reaches stderr.
  if (!tflmLog().empty()) std::fprintf(stderr, "tflm_run: TFLM says: %s\n", tflmMessages().c_str());

  const nlohmann::json result = {
      {"model", modelPath},
      {"images", images},
      {"arena_bytes", arenaBytes},
      {"arena_used_bytes", interpreter.arena_used_bytes()},
      {"min_arena_bytes", minArenaBytes},
      {"arena_breakdown", breakdown},
      {"memory_plan", plan},
      {"input", describe(*input)},
      {"output", describe(*output)},
      {"ops", ops},
      {"outputs", outputs},
      {"invoke_us", invokeUs},
  };
  std::printf("%s\n", result.dump().c_str());
  return 0;
}
