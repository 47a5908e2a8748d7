# A small CPU-bound Python workload for the python arm's speed figures (native python3.11 vs
# python.wasm under node and under sprawl): calls, integer arithmetic, dicts, strings, sorting.
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def words(count):
    counts = {}
    for i in range(count):
        w = "w%d" % (i * 7919 % 1000)
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]


def sieve(limit):
    flags = bytearray([1]) * (limit + 1)
    flags[0:2] = b"\0\0"
    for p in range(2, int(limit ** 0.5) + 1):
        if flags[p]:
            flags[p * p :: p] = bytes(len(range(p * p, limit + 1, p)))
    return sum(flags)


print(fib(22), words(100_000), sieve(200_000))
