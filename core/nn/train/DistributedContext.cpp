#include "nn/train/DistributedContext.h"

#include "Error.h"
#include "io/Text.h"

#include <ATen/ATen.h>
#include <c10/util/Logging.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <sstream>

namespace tinyscope {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kBucketBytes = 25u << 20;   // PyTorch DDP's default bucket_cap_mb

// Whether rank 0 could serve the store on `port` (bound with SO_REUSEADDR as TCPStore does, so a
// port in TIME_WAIT from an earlier run is not taken for one in use).
bool portFree(int port, std::string& why)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return true;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd, 1) == 0;
    if (!ok) why = std::strerror(errno);
    ::close(fd);
    return ok;
}

bool isLoopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1"; }

// The first line of a c10d or Gloo message, as ours quote it (it may repeat a host name or path).
std::string firstLine(const std::string& what) { return escapedForMessage(what.substr(0, what.find('\n')), 300); }

std::string fileRendezvous(const std::string& path) { return "--rendezvous file:" + escapedForMessage(path); }

// c10d logs a warning every second while a rank retries rank 0's store and an error line per
// failed step; our one-line messages say what happened. PyTorch's TORCH_CPP_LOG_LEVEL, when set,
// keeps c10d's own lines.
void quietC10dLogs()
{
    if (const char* level = std::getenv("TORCH_CPP_LOG_LEVEL"); level && *level) return;
    FLAGS_caffe2_log_level = std::max(FLAGS_caffe2_log_level, 3);   // FATAL: c10d's warnings and errors off
}

// The first record of a rendezvous file tinyscope makes, in c10d::FileStore's format (key, then
// value, each a 32-bit length and its bytes). A file that does not begin with it is not ours:
// FileStore would append to it and read its bytes as records (and hang on a length past the end).
std::string rendezvousFileHeader()
{
    auto field = [](const std::string& text) {
        const std::uint32_t n = static_cast<std::uint32_t>(text.size());
        std::string out(sizeof n, '\0');
        std::memcpy(out.data(), &n, sizeof n);
        return out + text;
    };
    return field("tinyscope-rendezvous") + field("tinyscope train-supernet rendezvous file, format 1");
}

// The rendezvous file, created with the header by the first rank to arrive, or one that holds the
// header (another rank of the run made it). Anything else at the path is refused: an existing file
// may be the user's. Written beside the path and hard-linked into place, so that the file appears
// whole or not at all and exactly one rank creates it.
void claimRendezvousFile(const std::string& path)
{
    const std::string header = rendezvousFileHeader();
    const std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw InputError(fileRendezvous(path) + ": cannot create the file: " + std::strerror(errno));
    const bool written = ::write(fd, header.data(), header.size()) == static_cast<ssize_t>(header.size());
    const int writeErr = errno;
    ::close(fd);
    const int linked = written ? ::link(tmp.c_str(), path.c_str()) : -1;
    const int linkErr = written ? errno : writeErr;
    ::unlink(tmp.c_str());
    if (linked == 0) return;
    if (linkErr != EEXIST) throw InputError(fileRendezvous(path) + ": cannot create the file: " + std::strerror(linkErr));
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        throw InputError(fileRendezvous(path) + ": exists and is not a regular file; give a path that does not exist");
    std::string start(header.size(), '\0');
    const int in = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    const ssize_t got = in < 0 ? -1 : ::read(in, start.data(), start.size());
    if (in >= 0) ::close(in);
    if (got != static_cast<ssize_t>(header.size()) || start != header)
        throw InputError(fileRendezvous(path) + ": the file exists and is not a rendezvous file of tinyscope (it may be yours): "
                                                "give a path that does not exist; the first rank creates it and the last one deletes it");
}

}  // namespace

struct DistributedContext::Impl {
    DistributedContext& self;
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;

    // Waits for a collective, counting its time; a failure (a rank died, or stopped answering
    // for longer than the timeout) becomes a DistributedError that names this rank.
    enum class Kind { Other, Gradient, Broadcast };
    void wait(const c10::intrusive_ptr<c10d::Work>& work, std::size_t bytes, Kind kind = Kind::Other)
    {
        const auto t0 = Clock::now();
        try {
            work->wait();
        } catch (const std::exception& e) {
            fail(e.what());
        }
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        self.traffic_.seconds += s;
        self.traffic_.bytes += bytes;
        ++self.traffic_.calls;
        if (kind == Kind::Gradient) {
            self.traffic_.gradient_seconds += s;
            self.traffic_.gradient_bytes += bytes;
        } else if (kind == Kind::Broadcast) {
            self.traffic_.broadcast_seconds += s;
            self.traffic_.broadcast_bytes += bytes;
        }
    }

    [[noreturn]] void fail(const std::string& what)
    {
        std::ostringstream m;
        m << "rank " << self.env_.rank << " of " << self.env_.world_size
          << ": another rank died or stopped answering (Gloo timeout " << self.env_.timeout_seconds << " s): " << firstLine(what);
        if (self.failure_.empty()) self.failure_ = m.str();
        throw DistributedError(m.str());
    }

    // Every rank joins once, then all wait for the last until `deadline`, before Gloo opens a
    // socket per peer. A rank number that joins twice is a second process with the same RANK or,
    // in a rendezvous file, a rank of an earlier run that did not finish.
    void meet(Clock::time_point deadline)
    {
        const DistributedEnv& env = self.env_;
        const std::string where = "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size);
        bool twice = false;
        try {
            twice = store->add("join/" + std::to_string(env.rank), 1) > 1;
            if (!twice) {
                if (store->add("joined", 1) == env.world_size) store->set("all-joined", {'1'});
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
                store->wait({"all-joined"}, std::max(left, std::chrono::milliseconds(1)));
            }
        } catch (const std::exception& e) {
            std::int64_t arrived = -1;
            try {
                arrived = store->add("joined", 0);
            } catch (const std::exception&) {
            }
            if (arrived < 0)
                throw DistributedError(where + ": the rendezvous failed: " + firstLine(e.what()));
            throw DistributedError(where + ": " + std::to_string(arrived) + " of " + std::to_string(env.world_size) +
                                   " ranks arrived at the rendezvous within " + std::to_string(static_cast<int>(env.timeout_seconds)) +
                                   " s (are all " + std::to_string(env.world_size) + " ranks started?)");
        }
        if (twice && !env.store_file.empty())
            throw InputError(fileRendezvous(env.store_file) + ": rank " + std::to_string(env.rank) +
                             " has already joined through this file: it is left from an earlier run (delete it, then start every"
                             " rank again) or two processes have rank " + std::to_string(env.rank));
        if (twice) throw InputError("two processes have rank " + std::to_string(env.rank) + ": every rank number must be started once");
    }

    c10::intrusive_ptr<c10d::Work> allreduce(at::Tensor& t, c10d::ReduceOp op = c10d::ReduceOp::SUM)
    {
        std::vector<at::Tensor> v = {t};
        c10d::AllreduceOptions o;
        o.reduceOp = op;
        try {
            return pg->allreduce(v, o);
        } catch (const std::exception& e) {
            fail(e.what());
        }
    }
};

namespace {

// The sum over ranks as an autograd function: every rank's loss depends on every rank's local
// statistics, so the gradient reaching a rank's local tensor is the sum of all ranks' gradients
// of the global one (the backward is the same all-reduce).
struct SumAcrossRanksFn : torch::autograd::Function<SumAcrossRanksFn> {
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& local, DistributedContext::Impl* impl)
    {
        ctx->saved_data["impl"] = reinterpret_cast<std::int64_t>(impl);
        at::Tensor out = local.detach().contiguous().clone();
        impl->wait(impl->allreduce(out), static_cast<std::size_t>(out.nbytes()));
        return out;
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads)
    {
        auto* impl = reinterpret_cast<DistributedContext::Impl*>(ctx->saved_data["impl"].toInt());
        at::Tensor g = grads[0].contiguous().clone();
        impl->wait(impl->allreduce(g), static_cast<std::size_t>(g.nbytes()));
        return {g, at::Tensor()};
    }
};

}  // namespace

DistributedContext::DistributedContext(const DistributedEnv& env) : env_(env), impl_(std::make_unique<Impl>(Impl{*this, {}, {}}))
{
    if (!env_.enabled) throw InputError("DistributedContext needs a distributed environment (WORLD_SIZE > 1)");
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(env_.timeout_seconds * 1000));
    // Inputs first, before c10d is touched: a name that cannot resolve or an interface that does
    // not exist is refused at once instead of being retried until the timeout.
    env_.requireResolvableMaster();
    const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
    if (ifname && *ifname && ::if_nametoindex(ifname) == 0)
        throw InputError("GLOO_SOCKET_IFNAME='" + escapedForMessage(ifname) + "': no such network interface on this host");
    quietC10dLogs();
    const auto deadline = Clock::now() + timeout;
    const std::string rank = "rank " + std::to_string(env_.rank) + " of " + std::to_string(env_.world_size);
    const std::string seconds = std::to_string(static_cast<int>(env_.timeout_seconds)) + " s";
    c10::intrusive_ptr<c10d::Store> base;
    if (!env_.store_file.empty()) {
        claimRendezvousFile(env_.store_file);
        try {
            base = c10::make_intrusive<c10d::FileStore>(env_.store_file, env_.world_size);
        } catch (const std::exception& e) {
            throw InputError(fileRendezvous(env_.store_file) + ": cannot use the file: " + firstLine(e.what()));
        }
        base->setTimeout(timeout);
    } else {
        std::string why;
        if (env_.rank == 0 && !portFree(env_.master_port, why))
            throw InputError("MASTER_PORT " + std::to_string(env_.master_port) + " is in use on this host (" + why +
                             "): rank 0 serves the rendezvous there; pick a free port");
        c10d::TCPStoreOptions o;
        o.port = static_cast<std::uint16_t>(env_.master_port);
        o.isServer = env_.rank == 0;
        o.numWorkers = static_cast<std::size_t>(env_.world_size);
        o.waitWorkers = false;   // the ranks meet below, on one deadline for both kinds of store
        o.timeout = timeout;
        try {
            base = c10::make_intrusive<c10d::TCPStore>(env_.master_addr, o);
        } catch (const std::exception& e) {
            const std::string what = e.what();
            if (env_.rank == 0 && what.find("in use") != std::string::npos)
                throw InputError("MASTER_PORT " + std::to_string(env_.master_port) + " is in use on this host: pick a free port");
            throw DistributedError(rank + ": rank 0's rendezvous at " + escapedForMessage(env_.master_addr) + ":" +
                                   std::to_string(env_.master_port) + " did not answer within " + seconds +
                                   " (is rank 0 started?): " + firstLine(what));
        }
    }
    impl_->store = c10::make_intrusive<c10d::PrefixStore>("tinyscope", base);
    impl_->meet(deadline);
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    // Gloo listens on the interface GLOO_SOCKET_IFNAME names, else on the address of the host name
    // (PyTorch's rule); a loopback rendezvous keeps everything on loopback.
    try {
        if (ifname && *ifname)
            opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
        else if (isLoopback(env_.master_addr))
            opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
        else
            opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
        impl_->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, env_.rank, env_.world_size, opts);
    } catch (const std::exception& e) {
        throw DistributedError(rank + ": could not connect the Gloo process group: " + firstLine(e.what()));
    }
}

DistributedContext::~DistributedContext() = default;

void DistributedContext::requireSameRun(const std::vector<std::pair<std::string, std::string>>& facts)
{
    std::string mine;
    for (const auto& [k, v] : facts) mine += k + "=" + v + "\n";
    auto bytes = [](const std::string& s) { return std::vector<std::uint8_t>(s.begin(), s.end()); };
    auto text = [](const std::vector<std::uint8_t>& v) { return std::string(v.begin(), v.end()); };
    // The first of my facts that rank r's differ in, as the message every rank prints; "" if none.
    auto differenceWith = [&](int r, const std::string& published) {
        std::map<std::string, std::string> theirs;
        std::istringstream in(published);
        for (std::string line; std::getline(in, line);) {
            const std::size_t eq = line.find('=');
            if (eq != std::string::npos) theirs[line.substr(0, eq)] = line.substr(eq + 1);
        }
        for (const auto& [k, val] : facts)
            if (theirs[k] != val)
                return "ranks disagree on the " + k + ": rank " + std::to_string(rank()) + " has '" + escapedForMessage(val) + "', rank " +
                       std::to_string(r) + " has '" + escapedForMessage(theirs[k]) + "'; every rank must run the same command";
        return std::string();
    };
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(env_.timeout_seconds * 1000));
    std::string mismatch;
    try {
        // Rank 0 compares every rank with itself and publishes the first difference (the verdict);
        // the others compare with rank 0 and read the verdict: N store reads in all, not N².
        impl_->store->set("run/" + std::to_string(rank()), bytes(mine));
        if (isRoot()) {
            std::vector<std::string> others;
            for (int r = 1; r < worldSize(); ++r) others.push_back("run/" + std::to_string(r));
            impl_->store->wait(others, timeout);
            for (int r = 1; r < worldSize() && mismatch.empty(); ++r) mismatch = differenceWith(r, text(impl_->store->get(others[r - 1])));
            impl_->store->set("run/verdict", bytes(mismatch));
        } else {
            mismatch = differenceWith(0, text(impl_->store->get("run/0")));
            const std::string verdict = text(impl_->store->get("run/verdict"));
            if (mismatch.empty()) mismatch = verdict;
        }
        // Rank 0 serves the store: it stays until every rank has read the verdict.
        if (impl_->store->add("run/checked", 1) == worldSize()) impl_->store->set("run/all-checked", bytes("1"));
        if (isRoot()) impl_->store->wait({"run/all-checked"}, timeout);
    } catch (const std::exception& e) {
        if (!mismatch.empty()) throw InputError(mismatch);
        impl_->fail(e.what());
    }
    if (!mismatch.empty()) throw InputError(mismatch);
}

std::pair<std::size_t, std::size_t> DistributedContext::shardOf(std::size_t rows) const
{
    const std::size_t w = static_cast<std::size_t>(worldSize()), r = static_cast<std::size_t>(rank());
    return {rows * r / w, rows * (r + 1) / w};
}

namespace {

// Tensors grouped into flat buckets of one dtype and at most kBucketBytes (a larger tensor alone).
std::vector<std::vector<at::Tensor>> buckets(const std::vector<at::Tensor>& tensors)
{
    std::vector<std::vector<at::Tensor>> out;
    std::map<at::ScalarType, std::size_t> open;   // dtype -> index of its open bucket
    std::map<at::ScalarType, std::size_t> fill;
    for (const at::Tensor& t : tensors) {
        const std::size_t b = static_cast<std::size_t>(t.nbytes());
        auto it = open.find(t.scalar_type());
        if (it == open.end() || fill[t.scalar_type()] + b > kBucketBytes) {
            open[t.scalar_type()] = out.size();
            fill[t.scalar_type()] = 0;
            out.emplace_back();
        }
        out[open[t.scalar_type()]].push_back(t);
        fill[t.scalar_type()] += b;
    }
    return out;
}

at::Tensor flatten(const std::vector<at::Tensor>& ts)
{
    std::vector<at::Tensor> flat;
    for (const at::Tensor& t : ts) flat.push_back(t.detach().reshape({-1}));
    return at::cat(flat);
}

void unflatten(const at::Tensor& flat, const std::vector<at::Tensor>& ts)
{
    std::int64_t at = 0;
    for (const at::Tensor& t : ts) {
        t.detach().copy_(flat.slice(0, at, at + t.numel()).view(t.sizes()));
        at += t.numel();
    }
}

}  // namespace

void DistributedContext::broadcastFromRoot(const std::vector<at::Tensor>& tensors)
{
    at::NoGradGuard guard;
    for (const std::vector<at::Tensor>& b : buckets(tensors)) {
        at::Tensor flat = flatten(b);
        std::vector<at::Tensor> v = {flat};
        c10d::BroadcastOptions o;
        o.rootRank = 0;
        c10::intrusive_ptr<c10d::Work> w;
        try {
            w = impl_->pg->broadcast(v, o);
        } catch (const std::exception& e) {
            impl_->fail(e.what());
        }
        impl_->wait(w, static_cast<std::size_t>(flat.nbytes()), Impl::Kind::Broadcast);
        unflatten(flat, b);
    }
}

void DistributedContext::averageGradients(const std::vector<at::Tensor>& grads)
{
    at::NoGradGuard guard;
    std::vector<std::vector<at::Tensor>> bs = buckets(grads);
    std::vector<at::Tensor> flats;
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (const std::vector<at::Tensor>& b : bs) {
        flats.push_back(flatten(b));
        works.push_back(impl_->allreduce(flats.back()));   // launched; Gloo runs it on its own thread
    }
    for (std::size_t i = 0; i < bs.size(); ++i) {
        impl_->wait(works[i], static_cast<std::size_t>(flats[i].nbytes()), Impl::Kind::Gradient);
        flats[i].div_(static_cast<double>(worldSize()));
        unflatten(flats[i], bs[i]);
    }
}

at::Tensor DistributedContext::sumAcrossRanks(const at::Tensor& local) { return SumAcrossRanksFn::apply(local, impl_.get()); }

double DistributedContext::average(double value)
{
    at::Tensor t = at::full({1}, value, at::kDouble);
    impl_->wait(impl_->allreduce(t), 8);
    return t.item<double>() / worldSize();
}

void DistributedContext::requireSame(std::uint64_t value, const std::string& what)
{
    // max(h) and max(~h) equal this rank's own only if every rank holds the same h.
    std::int64_t h;
    std::memcpy(&h, &value, sizeof h);
    at::Tensor t = at::tensor({h, ~h}, at::kLong);
    impl_->wait(impl_->allreduce(t, c10d::ReduceOp::MAX), 16);
    if (t[0].item<std::int64_t>() != h || t[1].item<std::int64_t>() != ~h)
        throw DistributedError("rank " + std::to_string(rank()) + ": ranks disagree on " + what +
                               " (the samplers diverged: the same binary, recipe and seed on every rank?)");
}

void DistributedContext::barrier()
{
    c10::intrusive_ptr<c10d::Work> w;
    try {
        w = impl_->pg->barrier();
    } catch (const std::exception& e) {
        impl_->fail(e.what());
    }
    impl_->wait(w, 0);
}

}  // namespace tinyscope
