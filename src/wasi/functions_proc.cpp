// wasi_snapshot_preview1 process-level functions: args and environ, clocks, randomness,
// poll_oneoff, proc_exit/proc_raise, sched_yield, and the sock_* calls no guest fd can satisfy.
#include "wasi/host_call.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <sys/random.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace sprawling::wasi {

namespace e = abi::errno_;
namespace L = abi::layout;

namespace {

std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

std::uint64_t xoshiro_next(std::array<std::uint64_t, 4>& s) noexcept {
  const std::uint64_t result = rotl(s[1] * 5, 7) * 9;
  const std::uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

}  // namespace

void seed_deterministic(std::array<std::uint64_t, 4>& s, std::uint64_t seed) noexcept {
  for (auto& word : s) word = splitmix64(seed);
}

void fill_deterministic(std::array<std::uint64_t, 4>& s, std::span<std::uint8_t> out) noexcept {
  std::size_t i = 0;
  while (i < out.size()) {
    const std::uint64_t word = xoshiro_next(s);
    const std::size_t n = std::min<std::size_t>(8, out.size() - i);
    std::memcpy(out.data() + i, &word, n);
    i += n;
  }
}

namespace {

// ---------------------------------------------------------------- args / environ

// Writes NUL-terminated strings into `buf` and their guest addresses into `ptrs`; both regions
// are bounds-checked as a whole before anything is written.
Result<void> store_strings(Call& c, const std::vector<std::string>& strings, std::uint32_t ptrs, std::uint32_t buf) {
  std::uint64_t total = 0;
  for (const auto& s : strings) total += s.size() + 1;
  SPRAWLING_WASI_CHECK(charge_bytes(c, total + strings.size() * 4));
  auto table = c.memory.array(ptrs, static_cast<std::uint32_t>(strings.size()), 4, 4);
  if (!table) return std::unexpected(std::move(table).error());
  auto bytes = c.memory.bytes(buf, total);
  if (!bytes) return std::unexpected(std::move(bytes).error());
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < strings.size(); ++i) {
    put<std::uint32_t>(*table, static_cast<std::uint32_t>(i * 4), static_cast<std::uint32_t>(buf + at));
    std::memcpy(bytes->data() + at, strings[i].data(), strings[i].size());
    at += strings[i].size();
    (*bytes)[at++] = 0;
  }
  return {};
}

Result<void> store_sizes(Call& c, const std::vector<std::string>& strings, std::uint32_t count_ptr,
                         std::uint32_t size_ptr) {
  std::uint64_t total = 0;
  for (const auto& s : strings) total += s.size() + 1;
  if (strings.size() > UINT32_MAX || total > UINT32_MAX) return fail(e::overflow);
  SPRAWLING_WASI_CHECK(c.memory.store<std::uint32_t>(count_ptr, static_cast<std::uint32_t>(strings.size())));
  return c.memory.store<std::uint32_t>(size_ptr, static_cast<std::uint32_t>(total));
}

std::vector<std::string> environ_strings(const WasiState& state) {
  std::vector<std::string> out;
  out.reserve(state.env.size());
  for (const auto& [key, value] : state.env) {
    std::string entry;
    entry.reserve(key.size() + 1 + value.size());
    entry.append(key).append("=").append(value);
    out.push_back(std::move(entry));
  }
  return out;
}

// ---------------------------------------------------------------- clocks

Result<void> check_clock(std::uint32_t id) {
  if (id > abi::clockid::thread_cputime) return fail(e::inval);
  // Wasmtime offers no CPU-time clocks and answers EBADF for them.
  if (id == abi::clockid::process_cputime || id == abi::clockid::thread_cputime) return fail(e::badf);
  return {};
}

// Reads a clock without advancing the deterministic time (poll_oneoff needs "now" twice).
Result<std::uint64_t> peek_clock(const WasiState& state, std::uint32_t id) {
  if (state.deterministic) {
    return id == abi::clockid::realtime ? state.realtime_start_ns + state.virtual_elapsed_ns
                                        : state.virtual_elapsed_ns;
  }
  if (id == abi::clockid::realtime) {
    struct timespec ts {};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_sec < 0) return fail(e::overflow);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
  }
  const auto elapsed = std::chrono::steady_clock::now() - state.monotonic_origin;
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
}

}  // namespace

namespace fn {

// args_get(argv**, argv_buf*)
Result<void> args_get(Call& c, U32 argv, U32 argv_buf) {
  return store_strings(c, c.state.args, argv, argv_buf);
}
// args_sizes_get(argc*, argv_buf_size*)
Result<void> args_sizes_get(Call& c, U32 argc_out, U32 argv_buf_size_out) {
  return store_sizes(c, c.state.args, argc_out, argv_buf_size_out);
}
// environ_get(environ**, environ_buf*): "KEY=VALUE\0" each, in the configured order.
Result<void> environ_get(Call& c, U32 environ, U32 environ_buf) {
  return store_strings(c, environ_strings(c.state), environ, environ_buf);
}
// environ_sizes_get(count*, buf_size*)
Result<void> environ_sizes_get(Call& c, U32 count_out, U32 buf_size_out) {
  return store_sizes(c, environ_strings(c.state), count_out, buf_size_out);
}

// clock_res_get(id, resolution*)
Result<void> clock_res_get(Call& c, U32 id, U32 resolution_out) {
  SPRAWLING_WASI_CHECK(check_clock(id));
  std::uint64_t resolution = c.state.clock_step_ns;
  if (!c.state.deterministic) {
    struct timespec ts {};
    if (::clock_getres(id == abi::clockid::realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts) != 0) {
      return fail_host(errno);
    }
    resolution = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
  }
  return c.memory.store<std::uint64_t>(resolution_out, std::max<std::uint64_t>(resolution, 1));
}

// clock_time_get(id, precision, time*): precision is ignored (as Wasmtime). Deterministic mode
// advances its time by one step per read, so a guest's busy-wait on the clock terminates.
Result<void> clock_time_get(Call& c, U32 id, U64 /*precision*/, U32 time_out) {
  SPRAWLING_WASI_CHECK(check_clock(id));
  auto now = peek_clock(c.state, id);
  if (!now) return std::unexpected(std::move(now).error());
  if (c.state.deterministic) c.state.virtual_elapsed_ns += c.state.clock_step_ns;
  return c.memory.store<std::uint64_t>(time_out, *now);
}

// random_get(buf*, buf_len)
Result<void> random_get(Call& c, U32 buf, U32 buf_len) {
  if (auto taken = take_copy(c, buf_len); !taken) return std::unexpected(std::move(taken).error());
  SPRAWLING_WASI_CHECK(charge_bytes(c, buf_len));
  auto out = c.memory.bytes(buf, buf_len);
  if (!out) return std::unexpected(std::move(out).error());
  if (c.state.deterministic) {
    fill_deterministic(c.state.rng, *out);
    return {};
  }
  std::size_t done = 0;
  while (done < out->size()) {
    const ssize_t n = ::getrandom(out->data() + done, out->size() - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_host(errno);
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

// poll_oneoff(in*, out*, nsubscriptions, nevents*): clocks (realtime / monotonic, relative or
// absolute), FD_READ on stdin and files, FD_WRITE on stdout/stderr and files. Fd subscriptions are
// always ready (in-memory stdio, regular files); otherwise the call sleeps until the earliest clock.
Result<void> poll_oneoff(Call& c, U32 subscriptions, U32 events_out, U32 nsubscriptions, U32 nevents_out) {
  const std::uint32_t count = nsubscriptions;
  if (count == 0) return fail(e::inval);
  if (auto taken = take_copy(c, std::uint64_t{count} * L::subscription_size); !taken)
    return std::unexpected(std::move(taken).error());
  SPRAWLING_WASI_CHECK(charge_bytes(c, std::uint64_t{count} * L::subscription_size));
  auto subs = c.memory.array(subscriptions, count, L::subscription_size, L::subscription_align);
  if (!subs) return std::unexpected(std::move(subs).error());
  auto events = c.memory.array(events_out, count, L::event_size, L::event_align);
  if (!events) return std::unexpected(std::move(events).error());

  struct Sub {
    std::uint64_t userdata = 0;
    std::uint8_t type = 0;
    std::uint64_t wait_ns = 0;  // clocks: time left from now
    std::uint16_t rw_flags = 0;
  };
  std::vector<Sub> parsed(count);
  bool any_fd_ready = false;
  for (std::uint32_t i = 0; i < count; ++i) {
    auto rec = subs->subspan(std::size_t{i} * L::subscription_size, L::subscription_size);
    Sub& s = parsed[i];
    s.userdata = get<std::uint64_t>(rec, L::subscription_userdata);
    s.type = get<std::uint8_t>(rec, L::subscription_tag);
    if (s.type == abi::eventtype::clock) {
      const auto id = get<std::uint32_t>(rec, L::subscription_clock_id);
      const auto timeout = get<std::uint64_t>(rec, L::subscription_clock_timeout);
      const auto flags = get<std::uint16_t>(rec, L::subscription_clock_flags);
      if (id != abi::clockid::realtime && id != abi::clockid::monotonic) return fail(e::inval);
      if ((flags & ~abi::subclockflags_abstime) != 0) return fail(e::inval);
      if ((flags & abi::subclockflags_abstime) != 0) {
        auto now = peek_clock(c.state, id);
        if (!now) return std::unexpected(std::move(now).error());
        s.wait_ns = timeout > *now ? timeout - *now : 0;
      } else {
        s.wait_ns = timeout;
      }
    } else if (s.type == abi::eventtype::fd_read || s.type == abi::eventtype::fd_write) {
      FdEntry* entry = c.state.fds.find(get<std::uint32_t>(rec, L::subscription_fd));
      if (entry == nullptr) return fail(e::badf);
      if (s.type == abi::eventtype::fd_read) {
        if (entry->kind == FdKind::Stdin) {
          // A streamed stdin is reported ready; the read that follows waits under the deadline.
          if (c.state.stdin_host_fd < 0 && c.state.stdin_pos >= c.state.stdin_bytes.size()) {
            s.rw_flags = abi::eventrwflags_hangup;
          }
        } else if (entry->kind == FdKind::File) {
          struct stat st {};
          const off_t pos = ::lseek(entry->host.get(), 0, SEEK_CUR);
          if (::fstat(entry->host.get(), &st) == 0 && pos >= 0 && pos >= st.st_size) {
            s.rw_flags = abi::eventrwflags_hangup;
          }
        } else {
          return fail(e::badf);
        }
      } else if (entry->kind != FdKind::Stdout && entry->kind != FdKind::Stderr && entry->kind != FdKind::File) {
        return fail(e::badf);
      }
      any_fd_ready = true;
    } else {
      return fail(e::inval);
    }
  }

  std::uint64_t waited = 0;
  if (!any_fd_ready) {
    std::uint64_t wait = UINT64_MAX;
    for (const Sub& s : parsed) wait = std::min(wait, s.wait_ns);
    if (c.state.deterministic) {
      c.state.virtual_elapsed_ns += wait;
    } else if (wait > 0) {
      const auto start = std::chrono::steady_clock::now();
      const auto duration = std::chrono::nanoseconds(
          static_cast<std::int64_t>(std::min<std::uint64_t>(wait, static_cast<std::uint64_t>(INT64_MAX))));
      if (c.state.deadline && (*c.state.deadline <= start || duration > *c.state.deadline - start)) {
        std::this_thread::sleep_until(*c.state.deadline);
        return deadline_exceeded();
      }
      std::this_thread::sleep_for(duration);
    }
    waited = wait;
  }

  std::uint32_t written = 0;
  for (const Sub& s : parsed) {
    if (s.type == abi::eventtype::clock && s.wait_ns > waited) continue;
    auto rec = events->subspan(std::size_t{written} * L::event_size, L::event_size);
    std::memset(rec.data(), 0, L::event_size);
    put<std::uint64_t>(rec, L::event_userdata, s.userdata);
    put<std::uint16_t>(rec, L::event_error, e::success);
    put<std::uint8_t>(rec, L::event_type, s.type);
    if (s.type != abi::eventtype::clock) {
      put<std::uint64_t>(rec, L::event_nbytes, 1);  // as Wasmtime: "ready", not a byte count
      put<std::uint16_t>(rec, L::event_flags, s.rw_flags);
    }
    ++written;
  }
  return c.memory.store<std::uint32_t>(nevents_out, written);
}

// proc_exit(code): every u32 is passed on as is; the embedder decides what ≥ 126 means.
Result<void> proc_exit(Call&, U32 code) {
  return exit_with(code);
}

// proc_raise(signal): not supported (Wasmtime).
Result<void> proc_raise(Call&, U32 signal) {
  if (signal > abi::signal_max) return fail(e::inval);
  return fail(e::notsup);
}

// sched_yield(): nothing to yield to (one guest thread).
Result<void> sched_yield(Call&) { return {}; }

// sock_*: no guest fd is ever a socket, so an open fd gives ENOTSOCK and a closed one EBADF.
Result<void> sock_accept(Call& c, U32 fd, U32 flags, U32 /*fd_out*/) {
  if ((flags & ~std::uint32_t{abi::fdflags::all}) != 0) return fail(e::inval);
  SPRAWLING_WASI_CHECK(any_fd(c, fd));
  return fail(e::notsock);
}
Result<void> sock_recv(Call& c, U32 fd, U32 /*ri_data*/, U32 /*ri_data_len*/, U32 ri_flags, U32 /*ro_datalen_out*/,
                       U32 /*ro_flags_out*/) {
  if ((ri_flags & ~std::uint32_t{abi::riflags_all}) != 0) return fail(e::inval);
  SPRAWLING_WASI_CHECK(any_fd(c, fd));
  return fail(e::notsock);
}
Result<void> sock_send(Call& c, U32 fd, U32 /*si_data*/, U32 /*si_data_len*/, U32 si_flags, U32 /*so_datalen_out*/) {
  if (si_flags != 0) return fail(e::inval);  // siflags defines no flag
  SPRAWLING_WASI_CHECK(any_fd(c, fd));
  return fail(e::notsock);
}
Result<void> sock_shutdown(Call& c, U32 fd, U32 how) {
  if ((how & ~std::uint32_t{abi::sdflags_all}) != 0) return fail(e::inval);
  SPRAWLING_WASI_CHECK(any_fd(c, fd));
  return fail(e::notsock);
}

}  // namespace fn

}  // namespace sprawling::wasi
