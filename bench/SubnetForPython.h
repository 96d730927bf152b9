#pragma once
// Writes an extracted subnet where bench/torch_subnet_baseline.py reads it: the state dict
// (Subnet::save, the lab's checkpoint format) and a JSON list of its blocks.
#include "nn/supernet/Supernet.h"

#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

namespace tinyscope::bench {

class SubnetForPython {
public:
    explicit SubnetForPython(const char* tag)
    {
        std::string t = std::string("/tmp/tinyscope-bench-") + tag + "-XXXXXX";
        dir_.assign(t.begin(), t.end());
        dir_.push_back('\0');
        if (!mkdtemp(dir_.data())) dir_.assign({'/', 't', 'm', 'p', '\0'});
        ckpt = std::string(dir_.data()) + "/subnet.pth";
        meta = std::string(dir_.data()) + "/meta.json";
    }
    ~SubnetForPython()
    {
        std::remove(ckpt.c_str());
        std::remove(meta.c_str());
        rmdir(dir_.data());
    }

    void write(const Subnet& sub) const
    {
        sub.save(ckpt);
        std::string j = "{\"blocks\": [";
        for (std::size_t i = 0; i < sub.weights().blocks.size(); ++i) {
            const BlockShape& b = sub.weights().blocks[i].shape;
            j += (i ? "," : "") + std::string("{\"index\":") + std::to_string(b.index) + ",\"fused\":" + (b.fused ? "true" : "false") +
                 ",\"stride\":" + std::to_string(b.stride) + ",\"se\":" + (b.se_mid ? "true" : "false") +
                 ",\"residual\":" + (b.residual ? "true" : "false") + "}";
        }
        j += "]}";
        if (FILE* f = std::fopen(meta.c_str(), "w")) {
            std::fputs(j.c_str(), f);
            std::fclose(f);
        }
    }

    std::string ckpt, meta;

private:
    std::vector<char> dir_;
};

}  // namespace tinyscope::bench
