"""Where a process's resident memory is: per mapping, and inside its own executable per section and symbol.

/proc/PID/smaps gives each mapping's Rss and its anonymous part (pages copied on write, heap,
stacks). For the executable, /proc/PID/pagemap tells which of its pages are present and whether
each is still the file's page or an anonymous copy; `readelf -S` and `nm -S` name the section
and symbol each present page falls in (a page shared by symbols counts for each symbol it holds;
the section totals count each page once).

Usage: rss_breakdown.py PID [SYMBOLS (12)]   (reading pagemap needs the process's owner or root)
"""
import collections, os, re, struct, subprocess, sys

PAGE = os.sysconf("SC_PAGE_SIZE")


def mappings(pid):
    """[(start, end, offset, path, {field: kB})] from /proc/PID/smaps."""
    result = []
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            head = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s*(.*)", line)
            if head:
                start, end, _, offset, path = head.groups()
                result.append((int(start, 16), int(end, 16), int(offset, 16), path or "[anonymous]", {}))
                continue
            field = re.match(r"(\w+):\s+(\d+) kB", line)
            if field and result:
                result[-1][4][field.group(1)] = int(field.group(2))
    return result


def by_path(maps):
    """{path: (Rss kB, anonymous kB)} summed over the mappings of each path."""
    totals = collections.defaultdict(lambda: [0, 0])
    for _, _, _, path, fields in maps:
        totals[path][0] += fields.get("Rss", 0)
        totals[path][1] += fields.get("Anonymous", 0)
    return totals


def present_pages(pid, start, end):
    """{page address: is a file page} of the present pages in [start, end)."""
    pages = {}
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        pagemap.seek(start // PAGE * 8)
        data = pagemap.read((end - start) // PAGE * 8)
    for i, (entry,) in enumerate(struct.iter_unpack("<Q", data)):
        if entry >> 63 & 1:
            pages[start + i * PAGE] = bool(entry >> 61 & 1)
    return pages


def sections(binary):
    """[(virtual address, size, name, file offset)] of the loaded sections of an ELF file."""
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    result = []
    for line in out.splitlines():
        fields = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
        if fields and "A" in fields.group(5):
            name, address, size = fields.group(1), int(fields.group(2), 16), int(fields.group(4), 16)
            if size:
                result.append((address, size, name, int(fields.group(3), 16)))
    return sorted(result)


def owner(symbol):
    """The library or Swift module a (mangled) symbol belongs to."""
    swift = re.match(r"_?\$s(\d+)", symbol)
    if swift:
        length = int(swift.group(1))
        start = swift.end()
        return symbol[start:start + length]
    if re.match(r"_?\$s", symbol):
        return "Swift"
    if "icu_" in symbol or re.search(r"_\d\d$", symbol):
        return "ICU"
    if symbol.startswith(("_ZN5swift", "swift_", "_swift", "__swift")):
        return "Swift runtime"
    if re.match(r"_*CF|_ZL\d+__?CF", symbol):
        return "CoreFoundation"
    if re.match(r"_*dispatch|_ZL\d+_dispatch", symbol):
        return "libdispatch"
    if "BoringSSL" in symbol:
        return "BoringSSL"
    return "other C/C++"


def symbols(binary, demangle=True):
    """[(address, size, name)] of the sized symbols of an ELF file."""
    out = subprocess.run(["nm", "-S", "--defined-only"] + (["-C"] if demangle else []) + [binary],
                         capture_output=True, text=True, check=True).stdout
    result = []
    for line in out.splitlines():
        fields = line.split(" ", 3)
        if len(fields) == 4 and int(fields[1], 16) > 0:
            result.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
    return sorted(result)


def icu_items(binary, address, size, file_offset):
    """[(offset in the data, item name)] of the table of contents of ICU's common data (udata.cpp)."""
    with open(binary, "rb") as handle:
        handle.seek(file_offset)
        data = handle.read(size)
    toc = struct.unpack_from("<H", data, 0)[0]   # the header's size: the table follows it
    items = []
    for i in range(struct.unpack_from("<I", data, toc)[0]):
        name_offset, data_offset = struct.unpack_from("<II", data, toc + 4 + 8 * i)
        items.append((toc + data_offset, data[toc + name_offset:data.index(b"\0", toc + name_offset)].decode()))
    return sorted(items)


def icu_breakdown(pid, binary, base, pages, section_list, all_symbols, top):
    """The items of ICU's data, linked into the executable, whose pages are resident."""
    found = [(a, s) for a, s, n in all_symbols if re.fullmatch(r"icudt\d+_dat", n)]
    if not found:
        return
    address, size = found[0]
    section = next((a, o) for a, s, n, o in section_list if a <= address < a + s)
    items = icu_items(binary, address, size, address - section[0] + section[1])
    resident = collections.Counter()
    for (start, name), (end, _) in zip(items, items[1:] + [(size, "")]):
        for page in range((base + address + start) // PAGE * PAGE, base + address + end, PAGE):
            if page in pages:
                resident[name] += min(page + PAGE, base + address + end) - max(page, base + address + start)
    print(f"  ICU data resident: {sum(resident.values()) / 2**20:.2f} MB of {size / 2**20:.1f} MB, in {len(resident)} items; largest (MB):")
    for name, size in resident.most_common(top):
        print(f"    {size / 2**20:6.2f}  {name}")


def executable_breakdown(pid, maps, top):
    binary = os.readlink(f"/proc/{pid}/exe")
    base = min(start - offset for start, _, offset, path, _ in maps if path == binary)
    pages = {}
    for start, end, _, path, _ in maps:
        if path == binary:
            pages.update(present_pages(pid, start, end))
    per_section = collections.defaultdict(lambda: [0, 0])   # name: [file pages, anonymous pages]
    section_list = sections(binary)
    for address, is_file in pages.items():
        relative = address - base
        name = next((n for a, s, n, _ in section_list if a <= relative + PAGE - 1 and relative < a + s), "(between sections)")
        per_section[name][0 if is_file else 1] += 1
    print(f"  {binary}: resident pages by section (MB file-backed / anonymous copy-on-write)")
    for name, (file_pages, anon_pages) in sorted(per_section.items(), key=lambda item: -sum(item[1])):
        if sum((file_pages, anon_pages)) * PAGE >= 64 * 1024:
            print(f"    {name:32} {file_pages * PAGE / 2**20:6.1f} / {anon_pages * PAGE / 2**20:5.1f}")
    resident_bytes = collections.Counter()
    for address, size, name in symbols(binary):
        first, last = (base + address) // PAGE * PAGE, (base + address + size - 1) // PAGE * PAGE
        resident_bytes[name] += sum(PAGE for page in range(first, last + PAGE, PAGE) if page in pages)
    text = next((a, s) for a, s, n, _ in section_list if n == ".text")
    per_owner = collections.Counter()
    mangled = symbols(binary, demangle=False)
    for address, size, name in mangled:
        if not (text[0] <= address < text[0] + text[1]):
            continue
        first, last = (base + address) // PAGE * PAGE, (base + address + size - 1) // PAGE * PAGE
        for page in range(first, last + PAGE, PAGE):
            if page in pages:
                per_owner[owner(name)] += min(page + PAGE, base + address + size) - max(page, base + address)
    print(f"  .text: bytes of the functions on resident pages, by module (MB; 0.1 MB or more)")
    for name, size in per_owner.most_common():
        if size >= 0.1 * 2**20:
            print(f"    {size / 2**20:6.2f}  {name}")
    icu_breakdown(pid, binary, base, pages, section_list, mangled, top)
    print(f"  largest resident symbols (MB of the pages they lie on)")
    for name, size in resident_bytes.most_common(top):
        print(f"    {size / 2**20:6.2f}  {name[:110]}")


def main():
    pid, top = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 12
    maps = mappings(pid)
    totals = by_path(maps)
    rss = sum(r for r, _ in totals.values())
    anon = sum(a for _, a in totals.values())
    print(f"  RSS {rss / 1024:.1f} MB: anonymous {anon / 1024:.1f} MB, file-backed {(rss - anon) / 1024:.1f} MB; by mapping (MB file-backed / anonymous):")
    for path, (r, a) in sorted(totals.items(), key=lambda item: -item[1][0]):
        if r >= 100:
            print(f"    {r / 1024 - a / 1024:6.1f} / {a / 1024:5.1f}  {path}")
    executable_breakdown(pid, maps, top)


if __name__ == "__main__":
    main()
