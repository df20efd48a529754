#!/usr/bin/env python3
"""craftcore.py -- edit an ELF core as a hostile user would (tests of `core`).

  craftcore.py CORE add-file START END PATH   another NT_FILE entry (offset 0)
  craftcore.py CORE rename-at ADDR PATH       the NT_FILE entry holding ADDR
                                              now names PATH
  craftcore.py CORE poke-ptrs NEW ADDR...     every aligned 8-byte word of the
                                              core's memory equal to one of
                                              ADDR becomes NEW; prints how many
  craftcore.py CORE add-seg VADDR LEN HEX     one more PT_LOAD (r-x) at VADDR,
                                              LEN bytes of HEX repeated
  craftcore.py CORE first-load                "VADDR MEMSZ" of the first PT_LOAD
  craftcore.py PID find PATH BYTES            addresses where BYTES (a Python
                                              bytes literal) start in PID's
                                              mappings of PATH (/proc/PID/mem)

Numbers are hex (0x...) or decimal.  The core is rewritten in place: new
notes and program headers go to its end, the old ones stay unreferenced.
"""
import ast
import struct
import sys

PT_LOAD, PT_NOTE, NT_FILE = 1, 4, 0x46494C45
PHDR = struct.Struct('<IIQQQQQQ')


def num(s):
    return int(s, 0)


class Core:
    def __init__(self, path):
        self.path = path
        self.b = bytearray(open(path, 'rb').read())
        assert self.b[:4] == b'\x7fELF' and self.b[4] == 2, 'not an ELF64 file'
        self.phoff, = struct.unpack_from('<Q', self.b, 0x20)
        self.phnum, = struct.unpack_from('<H', self.b, 0x38)
        self.ph = [list(PHDR.unpack_from(self.b, self.phoff + i * PHDR.size))
                   for i in range(self.phnum)]

    def save(self):
        open(self.path, 'wb').write(self.b)

    def append(self, data, align=8):
        self.b += b'\0' * (-len(self.b) % align)
        off = len(self.b)
        self.b += data
        return off

    def write_phdrs(self):
        data = b''.join(PHDR.pack(*p) for p in self.ph)
        self.phoff = self.append(data)
        struct.pack_into('<Q', self.b, 0x20, self.phoff)
        struct.pack_into('<H', self.b, 0x38, len(self.ph))

    # The notes: (name, type, desc) of the first PT_NOTE.
    def notes(self):
        p = next(p for p in self.ph if p[0] == PT_NOTE)
        off, end, out = p[2], p[2] + p[5], []
        while off + 12 <= end:
            nsz, dsz, typ = struct.unpack_from('<III', self.b, off)
            off += 12
            name = bytes(self.b[off:off + nsz])
            off += (nsz + 3) & ~3
            desc = bytes(self.b[off:off + dsz])
            off += (dsz + 3) & ~3
            out.append((name, typ, desc))
        return p, out

    def set_notes(self, p, notes):
        data = b''
        for name, typ, desc in notes:
            data += struct.pack('<III', len(name), len(desc), typ)
            data += name + b'\0' * (-len(name) % 4) + desc + b'\0' * (-len(desc) % 4)
        p[2] = self.append(data, 4)
        p[5] = len(data)
        self.write_phdrs()

    def files(self):
        p, notes = self.notes()
        i = next(i for i, n in enumerate(notes) if n[0] == b'CORE\0' and n[1] == NT_FILE)
        d = notes[i][2]
        count, pgsz = struct.unpack_from('<QQ', d, 0)
        ents = [list(struct.unpack_from('<QQQ', d, 16 + k * 24)) for k in range(count)]
        names = d[16 + count * 24:].split(b'\0')[:count]
        return p, notes, i, pgsz, [e + [n] for e, n in zip(ents, names)]

    def set_files(self, p, notes, i, pgsz, ents):
        d = struct.pack('<QQ', len(ents), pgsz)
        d += b''.join(struct.pack('<QQQ', *e[:3]) for e in ents)
        d += b''.join(e[3] + b'\0' for e in ents)
        notes[i] = (notes[i][0], NT_FILE, d)
        self.set_notes(p, notes)


def main(a):
    if a[1] == 'find':
        pid, path, needle = int(a[0]), a[2], ast.literal_eval(a[3])
        mem = open('/proc/%d/mem' % pid, 'rb')
        for line in open('/proc/%d/maps' % pid):
            f = line.split()
            if len(f) < 6 or f[5] != path:
                continue
            lo, hi = (int(x, 16) for x in f[0].split('-'))
            mem.seek(lo)
            try:
                data = mem.read(hi - lo)
            except OSError:
                continue
            k = data.find(needle)
            while k >= 0:
                print(hex(lo + k))
                k = data.find(needle, k + 1)
        return
    c = Core(a[0])
    op = a[1]
    if op == 'add-file':
        p, notes, i, pgsz, ents = c.files()
        ents.append([num(a[2]), num(a[3]), 0, a[4].encode()])
        c.set_files(p, notes, i, pgsz, ents)
    elif op == 'rename-at':
        p, notes, i, pgsz, ents = c.files()
        addr, hit = num(a[2]), 0
        for e in ents:
            if e[0] <= addr < e[1]:
                e[3], hit = a[3].encode(), 1
        assert hit, 'no NT_FILE entry holds %#x' % addr
        c.set_files(p, notes, i, pgsz, ents)
    elif op == 'poke-ptrs':
        new, old = num(a[2]), {num(x) for x in a[3:]}
        hits = 0
        for p in c.ph:
            if p[0] != PT_LOAD:
                continue
            for off in range(p[2], p[2] + p[5] - 7, 8):
                if struct.unpack_from('<Q', c.b, off)[0] in old:
                    struct.pack_into('<Q', c.b, off, new)
                    hits += 1
        print(hits)
    elif op == 'add-seg':
        vaddr, n, fill = num(a[2]), num(a[3]), bytes.fromhex(a[4])
        data = (fill * (n // len(fill) + 1))[:n]
        off = c.append(data, 4096)
        c.ph.append([PT_LOAD, 5, off, vaddr, 0, n, n, 4096])
        c.write_phdrs()
    elif op == 'first-load':
        p = next(p for p in c.ph if p[0] == PT_LOAD)
        print('%#x %#x' % (p[3], p[6]))
        return
    else:
        sys.exit('unknown operation ' + op)
    c.save()


if __name__ == '__main__':
    main(sys.argv[1:])
