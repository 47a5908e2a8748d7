// Tier-up (jit.hpp): the code of a module variant whose functions start interpreted, the
// interpreter's request when one turns hot, and the one background thread per process that
// compiles the requests (compile_function) and publishes their entries.
#include "wasm/jit/jit.hpp"
#include "wasm/jit/code_cache.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <memory>
#include <string>
#include <limits>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>
namespace sprawling::wasm::jit {

namespace {

// Interpreted calls (plus loop samples) after which a function is compiled. LLVM takes 5-50 ms
// of CPU for a small function (and sets itself up first), and the interpreter spends roughly
// 0.1-1 µs in a call of one, so a function pays for its compilation after some ten to a hundred
// thousand calls. 20,000: `sprawl python -c pass` (from its snapshot) makes no function that hot,
// so short jobs do no LLVM work; at 1,000 and 5,000 it compiled two.
constexpr std::int32_t kDefaultCalls = 20000;
// A function above this many bytes of wasm code stays interpreted under tier-up (measured on
// CPython, docs/compiled-tier.md "Tier-up": LLVM's time grows faster than the size).
constexpr std::size_t kDefaultMaxBytes = 64 * 1024;
// Without a hot set (no code cache), a function's threshold grows with its size: it is `calls`
// times 1 + (wasm code bytes / this). LLVM's time grows with the size (5-15 µs of CPU per byte
// plus a few ms; CPython's eval loop, 51.7 KB through FastISel, about 0.4 s, 1.6 s on a loaded
// machine), and most of a large function's calls are loop samples (time spent in it), so a large
// function must run longer before it pays back within the process. At one threshold for all,
// CPython's eval loop turned hot within the first second of every job and its compilation made
// 3-7 s jobs use more CPU than the interpreter (docs/compiled-tier.md, "Tier-up").
constexpr std::size_t kDefaultBytesPerThreshold = 512;
// With a hot set, what tier-up compiles is kept in the code cache and linked by every later
// process of this module on the machine, so a compilation is paid once, not by each job: the
// threshold is the calls alone, whatever the size. Size-scaled, the eval loop never turned hot in
// CPU-bound Python jobs under a second, and every such job ran it interpreted (cpu_bound.py 0.28 s
// from a settled hot set; 0.18 s with the eval loop in it, its first job 0.3 s longer).
constexpr std::size_t kKeptBytesPerThreshold = 0;
// A function the hot set holds turns hot at this fraction of the threshold: its request links the
// hot set (nothing to compile), and every call before that is interpreted. A job too short to
// reach even that links nothing (CPython from its snapshot, `-c pass` or `print(...)`, reaches no
// function's 2,000 calls); cpu_bound.py with a settled hot set took 0.29 s at 2,000 calls
// against 0.32 s at 20,000.
constexpr std::int32_t kHotSetCallsDivisor = 10;
// Upgrades: quick code (FastISel, for a function too large for the optimizing code generator to
// pay back within a job: CPython's eval loop) runs at about 2.5x the time of optimized code. Once
// the process has run for about as long as the optimizing compile is expected to take (this many
// seconds of CPU per wasm code byte: the eval loop, 51.7 KB, took 3.7 s), tier-up compiles the
// function again with the optimizing pipeline and replaces its entry (and its hot set entry). A
// job that ran that long is likely to run as long again (so the compile is seldom wasted), and a
// shorter job never starts it. Each upgrade a process began is counted in the hot set; the delay
// doubles with each, so jobs too short to finish one stop starting it. Only with a hot set: the
// upgrade is then paid once on a machine; without one, every process whose quick code lived long
// enough would pay it again, for functions (libc's printf core) whose count made them hot once
// but that may not run much after.
constexpr double kUpgradeSecondsPerByte = 70e-6;
constexpr std::uint32_t kUpgradeDoublingsMax = 16;
// Requests waiting at most: past it a request is dropped and counted again later, so a burst of
// hot functions cannot grow memory without bound while one compiles.
constexpr std::size_t kQueueBound = 256;
// Threads compiling at once (SPRAWLING_JIT_TIER_UP_THREADS or tier_up_set_threads): one, so a
// job's own threads keep their cores; two jobs of one module variant never compile at once
// (their code shares one JIT), whatever the count.
constexpr unsigned kDefaultThreads = 1;
// The heap tier-up's compiles may hold, process-wide (SPRAWLING_JIT_TIER_UP_MEMORY or
// tier_up_set_memory_cap): each compile is charged the heap's growth across it (its code, its
// JIT's state, and what other threads allocate meanwhile), for as long as the code it compiled
// into lives; at or past the cap, hot functions stay interpreted.
constexpr std::uint64_t kDefaultMemoryCap = std::uint64_t{1} << 30;
// A numeric knob from the environment: the default when unset, empty or not a number (said once).
std::uint64_t env_count(const char* name, std::uint64_t fallback, std::uint64_t max) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != '\0' || n > max) {
    std::fprintf(stderr, "sprawl: %s=%s is not a count up to %llu; using %llu\n", name, v,
                 static_cast<unsigned long long>(max), static_cast<unsigned long long>(fallback));
    return fallback;
  }
  return n;
}

// The threshold: SPRAWLING_JIT_TIER_UP_CALLS, read on first use, or tier_up_set_calls.
std::atomic<std::int32_t>& calls_setting() {
  // At least 1: a countdown of 0 would ask on every call.
  static std::atomic<std::int32_t> calls{static_cast<std::int32_t>(
      std::max<std::uint64_t>(1, env_count("SPRAWLING_JIT_TIER_UP_CALLS", kDefaultCalls, INT32_MAX - 1)))};
  return calls;
}
std::int32_t threshold() {
  return calls_setting().load(std::memory_order_relaxed);
}
// SPRAWLING_JIT_TIER_UP_BYTES (0: every function at the same threshold), with or without a hot
// set; unset, the default of each.
std::size_t bytes_per_threshold(bool hot_set) {
  static const std::optional<std::size_t> set = []() -> std::optional<std::size_t> {
    const char* v = std::getenv("SPRAWLING_JIT_TIER_UP_BYTES");
    if (v == nullptr || *v == '\0') return std::nullopt;
    return static_cast<std::size_t>(env_count("SPRAWLING_JIT_TIER_UP_BYTES", kDefaultBytesPerThreshold, UINT32_MAX));
  }();
  return set.value_or(hot_set ? kKeptBytesPerThreshold : kDefaultBytesPerThreshold);
}
// The countdown of a function of `code_bytes` at `calls` (bounded below INT32_MAX, which marks
// a function asked for already), in code with or without a hot set.
std::int32_t countdown_for(std::int32_t calls, std::size_t code_bytes, bool hot_set) {
  const std::size_t unit = bytes_per_threshold(hot_set);
  const std::uint64_t factor = 1 + (unit == 0 ? 0 : code_bytes / unit);
  return static_cast<std::int32_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(calls) * factor, INT32_MAX - 1));
}

struct Job {
  // Weak while queued: a module (and its code) that goes away before its turn is not kept
  // alive by the queue, and its jobs are skipped.
  std::weak_ptr<const CompiledModule> module;
  std::weak_ptr<ModuleCode> code;
  std::uint32_t defined = 0;
  const ModuleCode* key = nullptr;  // the code it compiles into: one job per code at a time
};

// The delay before an upgrade in milliseconds (SPRAWLING_JIT_TIER_UP_UPGRADE_MS, or
// tier_up_set_upgrade_delay), -1: the default (upgrade_delay).
std::atomic<std::int64_t>& upgrade_delay_setting() {
  static std::atomic<std::int64_t> ms{[]() -> std::int64_t {
    const char* v = std::getenv("SPRAWLING_JIT_TIER_UP_UPGRADE_MS");
    if (v == nullptr || *v == '\0') return -1;
    return static_cast<std::int64_t>(env_count("SPRAWLING_JIT_TIER_UP_UPGRADE_MS", 0, INT32_MAX));
  }()};
  return ms;
}
std::chrono::steady_clock::duration upgrade_delay(std::size_t code_bytes, std::uint32_t attempts) {
  if (const std::int64_t ms = upgrade_delay_setting().load(std::memory_order_relaxed); ms >= 0)
    return std::chrono::milliseconds(ms);
  const auto once = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(kUpgradeSecondsPerByte * static_cast<double>(code_bytes)));
  return once * (std::int64_t{1} << std::min(attempts, kUpgradeDoublingsMax));
}

// Quick code of a function to replace with optimized code once it is due (upgrades, above). Held
// weakly, as a queued job.
struct Upgrade {
  std::weak_ptr<const CompiledModule> module;
  std::weak_ptr<ModuleCode> code;
  std::uint32_t defined = 0;
  const ModuleCode* key = nullptr;
  std::chrono::steady_clock::time_point due;
};

std::atomic<unsigned>& threads_setting() {
  static std::atomic<unsigned> threads{static_cast<unsigned>(
      std::max<std::uint64_t>(1, env_count("SPRAWLING_JIT_TIER_UP_THREADS", kDefaultThreads, 256)))};
  return threads;
}
std::atomic<std::uint64_t>& memory_cap_setting() {
  static std::atomic<std::uint64_t> cap{
      env_count("SPRAWLING_JIT_TIER_UP_MEMORY", kDefaultMemoryCap, std::numeric_limits<std::uint64_t>::max())};
  return cap;
}

// The tier-up thread. Never destroyed (a static's destructor could run while the thread waits
// on its members); the process's exit stops and joins it (stop()) before LLVM's own static
// destructors run, so no compilation is ever in flight while they do.
class Worker {
 public:
  static Worker& get() {
    static Worker* const w = new Worker;  // NOLINT(cppcoreguidelines-owning-memory): see above
    return *w;
  }

  bool push(Job job) {
    std::unique_lock lock(mutex_);
    if (stopping_ || queue_.size() >= kQueueBound) return false;
    queue_.push_back(std::move(job));
    // A thread more while jobs wait for one, up to the threads asked for.
    if (threads_.size() < std::min<std::size_t>(threads_setting().load(std::memory_order_relaxed),
                                                static_cast<std::size_t>(running_) + queue_.size()))
      start_locked();
    lock.unlock();
    wake_.notify_all();
    return true;
  }

  bool busy() {
    const std::lock_guard lock(mutex_);
    return running_ != 0 || !queue_.empty();
  }

  // tier_up_keep_unfinished: the jobs running and queued, each function without an entry yet
  // noted in its code's hot set.
  void keep_unfinished() {
    std::vector<Job> jobs;
    {
      const std::lock_guard lock(mutex_);
      jobs.assign(running_jobs_.begin(), running_jobs_.end());
      jobs.insert(jobs.end(), queue_.begin(), queue_.end());
    }
    for (const Job& job : jobs) {
      const std::shared_ptr<const CompiledModule> module = job.module.lock();
      const std::shared_ptr<ModuleCode> code = job.code.lock();
      if (!module || !code || !code->hot_cache || job.defined >= code->entries.size() ||
          code->entries[job.defined].entry.load(std::memory_order_acquire) != nullptr)
        continue;
      // Not kept (a full disk, a read-only cache): the next process compiles it when it turns hot.
      [[maybe_unused]] const auto noted = hot_set_want(module->impl(), *code, *code->hot_cache, job.defined);
    }
  }

  // Idle: nothing queued or running, and no upgrade of live code due (one due later is not waited
  // for).
  bool wait_idle(unsigned timeout_ms) {
    std::unique_lock lock(mutex_);
    return idle_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] {
      const auto now = std::chrono::steady_clock::now();
      return queue_.empty() && running_ == 0 &&
             std::ranges::none_of(upgrades_, [&](const Upgrade& u) { return u.due <= now && !u.code.expired(); });
    });
  }

  // Called on a tier-up thread only (after a compile or the hot set's linking), so a thread is
  // there to take it when it is due.
  void add_upgrade(Upgrade u) {
    std::unique_lock lock(mutex_);
    if (stopping_) return;
    upgrades_.push_back(std::move(u));
    lock.unlock();
    wake_.notify_all();
  }

  unsigned peak_running() {
    const std::lock_guard lock(mutex_);
    return peak_running_;
  }

  std::size_t threads() {
    const std::lock_guard lock(mutex_);
    return threads_.size();
  }

  // The heap the compiles of live code hold (the charges of code gone are dropped).
  std::uint64_t held() {
    const std::lock_guard lock(charges_mutex_);
    std::erase_if(charges_, [](const Charge& c) { return c.code.expired(); });
    std::uint64_t sum = 0;
    for (const Charge& c : charges_) sum += c.bytes;
    return sum;
  }

  void charge(const std::shared_ptr<ModuleCode>& code, std::uint64_t bytes) {
    if (bytes == 0) return;
    const std::lock_guard lock(charges_mutex_);
    charges_.push_back(Charge{code, bytes});
  }

  // tier_up_stop, and atexit: drops what is queued, cancels the job in flight at its next phase,
  // joins the thread. Later requests are refused.
  static void stop() {
    Worker& w = get();
    std::unique_lock lock(w.mutex_);
    if (w.stopping_) return;
    w.stopping_ = true;
    w.cancel_.store(true, std::memory_order_relaxed);
    w.queue_.clear();
    w.upgrades_.clear();
    lock.unlock();
    w.wake_.notify_all();
    // Threads start only under the mutex and never once stopping_ is set: the list is final here.
    for (std::thread& t : w.threads_)
      if (t.joinable()) t.join();
  }

 private:
  Worker() = default;

  void start_locked() {
    if (!at_exit_) {
      at_exit_ = true;
      std::atexit(&Worker::stop);
    }
    threads_.emplace_back([this] { loop(); });
  }

  // The first queued job whose code no other thread compiles into, or end().
  std::deque<Job>::iterator runnable_locked() {
    return std::ranges::find_if(queue_, [this](const Job& j) { return !in_flight_.contains(j.key); });
  }

  // The upgrade due first whose code no other thread compiles into (those of code gone are
  // dropped), or end().
  std::vector<Upgrade>::iterator next_upgrade_locked() {
    std::erase_if(upgrades_, [](const Upgrade& u) { return u.code.expired(); });
    auto best = upgrades_.end();
    for (auto it = upgrades_.begin(); it != upgrades_.end(); ++it)
      if (!in_flight_.contains(it->key) && (best == upgrades_.end() || it->due < best->due)) best = it;
    return best;
  }

  // Requests first; an upgrade only when none is runnable, and once it is due.
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (stopping_) break;
      if (const auto it = runnable_locked(); it != queue_.end()) {
        Job job = std::move(*it);
        queue_.erase(it);
        running_jobs_.push_back(job);
        work_locked(lock, job.key, [&] { run(job, cancel_); });
        std::erase_if(running_jobs_, [&](const Job& j) { return j.key == job.key && j.defined == job.defined; });
        continue;
      }
      const auto up = next_upgrade_locked();
      if (up == upgrades_.end()) {
        wake_.wait(lock);
        continue;
      }
      if (up->due > std::chrono::steady_clock::now()) {
        wake_.wait_until(lock, up->due);
        continue;
      }
      Upgrade upgrade = std::move(*up);
      upgrades_.erase(up);
      work_locked(lock, upgrade.key, [&] { run_upgrade(upgrade, cancel_); });
    }
    idle_.notify_all();
  }

  // Runs `work` (a job or an upgrade of `key`'s code) with the lock released.
  template <typename Work>
  void work_locked(std::unique_lock<std::mutex>& lock, const ModuleCode* key, Work&& work) {
    in_flight_.insert(key);
    ++running_;
    peak_running_ = std::max(peak_running_, running_);
    lock.unlock();
    std::forward<Work>(work)();
    lock.lock();
    --running_;
    in_flight_.erase(key);
    wake_.notify_all();  // a job of the same code may be runnable now
    // Again after every job, since a compilation may have made function-local statics LLVM
    // creates on first use: exit runs handlers and such destructors in reverse order of
    // registration, so stop() runs before theirs (a job in flight at exit may still make one
    // after it: processes call tier_up_stop before exit, as the CLI does).
    std::atexit(&Worker::stop);
    if (queue_.empty() && running_ == 0) idle_.notify_all();
  }

  // An upgrade (above): the function compiled again with the optimizing pipeline, its entry
  // replaced, its hot set entry too. The quick code stays where the upgrade fails or is refused.
  static void run_upgrade(const Upgrade& up, const std::atomic<bool>& cancel) {
    const std::shared_ptr<const CompiledModule> module = up.module.lock();
    const std::shared_ptr<ModuleCode> code = up.code.lock();
    if (!module || !code || up.defined >= code->quick.size() || code->quick[up.defined] == 0) return;
    if (!plugin().loaded) return;
    if (get().held() >= memory_cap_setting().load(std::memory_order_relaxed)) return;
    const CompiledModule::Impl& cm = module->impl();
    const std::uint64_t before = heap_bytes_in_use();
    if (code->hot_cache) (void)hot_set_begin_upgrade(cm, *code, *code->hot_cache, up.defined);
    const TierUpObject object = compile_function(cm, *code, up.defined, cancel, true);
    if (code->hot_cache && !object.object.empty()) {
      auto kept = hot_set_add(cm, *code, *code->hot_cache, up.defined, object);
      if (!kept && std::getenv("SPRAWLING_JIT_STATS") != nullptr)
        std::fprintf(stderr, "sprawl jit: tier-up: the upgrade of function %u not kept in the hot set: %s\n",
                     up.defined, kept.error().c_str());
    }
    const std::uint64_t after = heap_bytes_in_use();
    get().charge(code, after > before ? after - before : 0);
  }

  // The job holds the module and its code while it runs: a store or module dropped meanwhile
  // never waits for LLVM, and whichever reference goes last frees them (possibly here).
  static void run(const Job& job, const std::atomic<bool>& cancel) {
    const std::shared_ptr<const CompiledModule> module = job.module.lock();
    const std::shared_ptr<ModuleCode> code = job.code.lock();
    if (!module || !code) return;
    ++code->tier_up_requested;
    const std::size_t max = tier_up_max_bytes();
    const CompiledModule::Impl& cm = module->impl();
    // A function over the bound stays interpreted; the first request of a code with a hot set
    // still links the hot set below (which may hold it, kept by a process with a larger bound).
    const bool too_large = max != 0 && cm.module.code[job.defined].code_size > max;
    const auto leave_too_large = [&] {
      ++code->tier_up_too_large;
      code->reasons[job.defined] = "larger than the tier-up bound (" + std::to_string(max) +
                                   " bytes of wasm code, SPRAWLING_JIT_TIER_UP_MAX_BYTES)";
    };
    const bool link_hot_set = code->hot_cache && !code->hot_set_loaded;
    if (too_large && !link_hot_set) {
      leave_too_large();
      return;
    }
    // The process-wide cap on what tier-up's compiles hold.
    const std::uint64_t cap = memory_cap_setting().load(std::memory_order_relaxed);
    if (const std::uint64_t held = get().held(); held >= cap) {
      code->reasons[job.defined] = "tier-up's compiles hold " + std::to_string(held) +
                                   " bytes, at or over the tier-up memory cap of " + std::to_string(cap) +
                                   " bytes (SPRAWLING_JIT_TIER_UP_MEMORY)";
      return;
    }
    const std::uint64_t before = heap_bytes_in_use();
    const std::size_t mapped_before = code->linked_bytes;
    const auto charge = [&] {
      const std::uint64_t after = heap_bytes_in_use();
      get().charge(code, (after > before ? after - before : 0) + (code->linked_bytes - mapped_before));
    };
    if (link_hot_set) {
      // The first request links what earlier processes kept of this module variant, the
      // requested function too when it is there (jobs of one code never run at once).
      code->hot_set_loaded = true;
      std::vector<std::string> refused;
      std::vector<QuickFunction> quick;
      std::vector<std::uint32_t> wanted;
      const std::size_t linked = hot_set_load(cm, *code, *code->hot_cache, refused, quick, wanted);
      for (const std::uint32_t d : wanted)
        if (d != job.defined) (void)get().push(Job{job.module, job.code, d, job.key});
      const auto now = std::chrono::steady_clock::now();
      for (const QuickFunction& q : quick)
        get().add_upgrade(Upgrade{job.module, job.code, q.defined, job.key,
                                  now + upgrade_delay(cm.module.code[q.defined].code_size, q.attempts)});
      if (std::getenv("SPRAWLING_JIT_STATS") != nullptr) {
        std::fprintf(stderr, "sprawl jit: tier-up: %zu functions linked from the hot set\n", linked);
        for (const std::string& why : refused) std::fprintf(stderr, "sprawl jit: tier-up: hot set: %s\n", why.c_str());
      }
    }
    const bool linked = code->entries[job.defined].entry.load(std::memory_order_acquire) != nullptr;
    if (!linked && too_large) leave_too_large();
    // The compiler is the plugin, loaded by the first job that needs it (jit::plugin() loads it
    // once, for the whole process; the hot set is linked without it where the engine can): a
    // function that cannot be compiled stays interpreted.
    if (!linked && !too_large) {
      if (const PluginStatus& p = plugin(); !p.loaded) {
        code->reasons[job.defined] = "the compiled tier's plugin is unavailable: " + p.error;
        charge();
        return;
      }
      const TierUpObject object = compile_function(cm, *code, job.defined, cancel, false);
      if (object.object.empty() && cancel.load(std::memory_order_relaxed) && code->hot_cache)
        [[maybe_unused]] const auto noted = hot_set_want(cm, *code, *code->hot_cache, job.defined);
      if (object.quick && code->hot_cache)
        get().add_upgrade(Upgrade{job.module, job.code, job.defined, job.key,
                                  std::chrono::steady_clock::now() + upgrade_delay(cm.module.code[job.defined].code_size, 0)});
      if (code->hot_cache && !object.object.empty()) {
        auto kept = hot_set_add(cm, *code, *code->hot_cache, job.defined, object);
        if (!kept && std::getenv("SPRAWLING_JIT_STATS") != nullptr)
          std::fprintf(stderr, "sprawl jit: tier-up: function %u not kept in the hot set: %s\n", job.defined,
                       kept.error().c_str());
      }
    }
    charge();
  }

  struct Charge {
    std::weak_ptr<ModuleCode> code;
    std::uint64_t bytes = 0;
  };

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Job> queue_;
  std::vector<Upgrade> upgrades_;
  std::vector<std::thread> threads_;
  std::unordered_set<const ModuleCode*> in_flight_;
  std::vector<Job> running_jobs_;  // the jobs in run() (tier_up_keep_unfinished)
  unsigned running_ = 0;
  unsigned peak_running_ = 0;
  std::mutex charges_mutex_;
  std::vector<Charge> charges_;
  bool stopping_ = false;
  bool at_exit_ = false;
  std::atomic<bool> cancel_{false};
};

}  // namespace

std::size_t tier_up_max_bytes() {
  static const auto max =
      static_cast<std::size_t>(env_count("SPRAWLING_JIT_TIER_UP_MAX_BYTES", kDefaultMaxBytes, SIZE_MAX));
  return max;
}

std::shared_ptr<ModuleCode> tier_up_code(const CompiledModule::Impl& module, bool metered,
                                         std::shared_ptr<CodeCacheStorage> hot_cache) {
  auto code = std::make_shared<ModuleCode>(module.module.code.size());
  code->tier_up = true;
  code->metered = metered;
  code->hot_cache = std::move(hot_cache);
  code->quick.assign(code->entries.size(), 0);
  for (const FunctionBody& body : module.module.code) code->code_bytes += body.code_size;
  const std::int32_t calls = threshold();
  const bool hot_set = code->hot_cache != nullptr;
  for (std::size_t i = 0; i < code->entries.size(); ++i)
    code->entries[i].countdown.store(countdown_for(calls, module.module.code[i].code_size, hot_set),
                                     std::memory_order_relaxed);
  if (hot_set) {
    const std::int32_t early = std::max<std::int32_t>(1, calls / kHotSetCallsDivisor);
    for (const std::uint32_t d : hot_set_listed(module, metered, *code->hot_cache))
      code->entries[d].countdown.store(std::min(code->entries[d].countdown.load(std::memory_order_relaxed), early),
                                       std::memory_order_relaxed);
  }
  return code;
}

void tier_up_hot(FuncInst& f, int variant) {
  Slot* slot = f.jit[variant];
  // Asked once: a request that cannot be queued sets the countdown back below.
  slot->countdown.store(INT32_MAX, std::memory_order_relaxed);
  const InstanceImpl& inst = *f.instance;
  const CompiledModule::Impl& cm = inst.compiled_module->impl();
  std::shared_ptr<ModuleCode> code;
  {
    const std::lock_guard lock(cm.jit_mutex);
    code = cm.jit_tier_up[variant];
  }
  const std::uint32_t defined = f.func_index - inst.module->imported_funcs;
  // Only a slot of the tier-up code asks (whole-module slots practically never count down to 0;
  // what has no entry there stays interpreted).
  if (!code || defined >= code->entries.size() || &code->entries[defined] != slot) return;
  if (!Worker::get().push(Job{inst.compiled_module, code, defined, code.get()}))
    slot->countdown.store(countdown_for(threshold(), cm.module.code[defined].code_size, code->hot_cache != nullptr),
                          std::memory_order_relaxed);
}

void tier_up_set_calls(std::int32_t calls) {
  calls_setting().store(std::clamp<std::int32_t>(calls, 1, INT32_MAX - 1), std::memory_order_relaxed);
}

std::chrono::steady_clock::duration tier_up_upgrade_delay(std::size_t code_bytes, std::uint32_t attempts) {
  return upgrade_delay(code_bytes, attempts);
}

void tier_up_set_upgrade_delay(std::optional<std::chrono::milliseconds> delay) {
  upgrade_delay_setting().store(delay ? std::max<std::int64_t>(0, delay->count()) : -1, std::memory_order_relaxed);
}

void tier_up_set_threads(unsigned threads) {
  threads_setting().store(std::clamp(threads, 1U, 256U), std::memory_order_relaxed);
}

void tier_up_set_memory_cap(std::uint64_t bytes) {
  memory_cap_setting().store(bytes, std::memory_order_relaxed);
}

unsigned tier_up_peak_threads() {
  return Worker::get().peak_running();
}

std::size_t tier_up_threads_started() {
  return Worker::get().threads();
}

std::uint64_t tier_up_memory_held() {
  return Worker::get().held();
}

void tier_up_stop() {
  Worker::stop();
}

bool tier_up_busy() {
  return Worker::get().busy();
}

void tier_up_keep_unfinished() {
  Worker::get().keep_unfinished();
}

bool tier_up_wait_idle(unsigned timeout_ms) {
  return Worker::get().wait_idle(timeout_ms);
}

}  // namespace sprawling::wasm::jit
