#include "graph/LedgerCsv.h"

#include "graph/SparseScheme.h"

#include <sstream>

namespace tinyscope {

namespace {

// RFC 4180: quote fields with commas, quotes or line breaks.
std::string field(const std::string& s)
{
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string oneLine(const std::string& s)
{
    std::string t = s;
    for (char& c : t)
        if (c == '\n' || c == '\r') c = ' ';
    return t;
}

}  // namespace

std::string memoryLedgerCsv(const MemoryLedger& m, const Network& net, const std::string& schemeText,
                            const std::vector<CoverageFinding>& findings)
{
    std::ostringstream o;
    o << "# model " << oneLine(net.name) << ", autodiff " << autodiffModeName(m.mode) << "\n"
      << "# scheme " << oneLine(schemeText) << "\n"
      << "# extra_bytes " << m.extra.total() << ", extra_bits " << m.extra.totalBits() << "\n"
      << "# peak_bytes " << m.peak_bytes << ", peak_bytes_no_reorder " << m.peak_bytes_no_reorder
      << ", inference_peak_bytes " << m.inference_peak_bytes << ", trainable_bytes " << m.trainable_bytes << "\n";
    for (const CoverageFinding& f : findings)
        if (f.conv_index < 0) o << "# TinyEngine: " << oneLine(f.message) << "\n";
    o << "index,layer,role,bias,weight_ratio,k,cin,mask_bits,mask_bytes,bias_bytes,saved_input_bytes,weight_bytes,"
         "classifier_input_bytes,extra_bytes,tinyengine\n";
    std::int64_t bits = 0, biases = 0, saved = 0, weights = 0, cls = 0;
    for (const LedgerRow& r : m.rows) {
        std::string notes;
        for (const CoverageFinding& f : findings)
            if (f.conv_index == r.index) notes += (notes.empty() ? "" : "; ") + oneLine(f.message);
        const std::int64_t maskBytes = (r.mask_bits + 7) / 8;
        o << r.index << "," << field(r.name) << "," << field(r.role) << "," << (r.bias ? 1 : 0) << "," << formatRatio(r.ratio)
          << "," << r.k << "," << r.cin << "," << r.mask_bits << "," << maskBytes << "," << r.bias_bytes << ","
          << r.saved_input_bytes << "," << r.weight_bytes << "," << r.classifier_input_bytes << ","
          << maskBytes + r.bias_bytes + r.saved_input_bytes + r.weight_bytes + r.classifier_input_bytes << "," << field(notes)
          << "\n";
        bits += r.mask_bits;
        biases += r.bias_bytes;
        saved += r.saved_input_bytes;
        weights += r.weight_bytes;
        cls += r.classifier_input_bytes;
    }
    o << "total,,,,,,," << bits << "," << (bits + 7) / 8 << "," << biases << "," << saved << "," << weights << "," << cls << ","
      << m.extra.total() << ",\n";
    return o.str();
}

}  // namespace tinyscope
