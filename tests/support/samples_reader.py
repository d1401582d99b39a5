"""An independent reader of rtpulse samples files, versions 1 and 2, from
docs/samples-format.md alone (nothing of rtpulse's C++ code). The truth scripts of the
tests use it: read_samples(path) -> (records, trailer), records a list of tuples
(seq, expected_ns, actual_ns, thread, cpu, wake_path, flags, reserved); trailer a dict or
None (a file without trailer: every whole block / record before the cut is returned)."""

import struct

M64 = (1 << 64) - 1


def _crc32c(data, crc=0):
    table = _crc32c.table
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ table[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def _make_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        t.append(c)
    return t


_crc32c.table = _make_table()


def _s64(v):
    v &= M64
    return v - (1 << 64) if v >> 63 else v


def _unzigzag(v):
    return (v >> 1) ^ (-(v & 1) & M64)


class _Cursor:
    def __init__(self, data):
        self.d, self.i = data, 0

    def varint(self):
        v = shift = 0
        while True:
            b = self.d[self.i]
            self.i += 1
            v |= (b & 0x7F) << shift
            if b < 0x80:
                return v
            shift += 7

    def byte(self):
        self.i += 1
        return self.d[self.i - 1]


def _decode_predicted(payload, count):
    cur = _Cursor(payload)
    state = {}  # thread -> [seq, expected, latency, period, cpu, wake]  (u64 wrapping)
    out = []
    while len(out) < count:
        head = cur.varint()
        thread = head >> 1
        if head & 1 == 0:
            s = state[thread]
            for _ in range(cur.varint()):
                s[0] = (s[0] + 1) & M64
                s[1] = (s[1] + s[3]) & M64
                s[2] = (s[2] + _unzigzag(cur.varint())) & M64
                out.append((s[0], _s64(s[1]), _s64(s[1] + s[2]), thread, s[4], s[5], 0, 0))
            continue
        s = state.get(thread)
        dseq, dexp, dlat = cur.varint(), cur.varint(), cur.varint()
        cpu = cur.varint()
        wake, flags = cur.byte(), cur.byte()
        reserved = cur.varint()
        pseq, pexp, plat = ((s[0] + 1), (s[1] + s[3]), s[2]) if s else (0, 0, 0)
        seq = (pseq + _unzigzag(dseq)) & M64
        exp = (pexp + _unzigzag(dexp)) & M64
        lat = (plat + _unzigzag(dlat)) & M64
        if s is None:
            period = 0
        elif seq == (s[0] + 1) & M64:
            period = (exp - s[1]) & M64
        else:
            period = s[3]
        state[thread] = [seq, exp, lat, period, cpu, wake]
        out.append((seq, _s64(exp), _s64(exp + lat), thread, cpu, wake, flags, reserved))
    assert cur.i == len(payload), "bytes left over in a block"
    return out


def _read_v2(data):
    trailer = None
    end = len(data)
    if len(data) >= 64 + 48 and data[-48:-40] == b"RTPSEND2":
        _, count, dropped, flags, _, index_offset, crc, _ = struct.unpack_from(
            "<8sQQIIQII", data, len(data) - 48)
        assert _crc32c(data[-48:-8], _crc32c(data[index_offset:-48])) == crc, "index checksum"
        trailer = {"records": count, "dropped": dropped, "interrupted": bool(flags & 1)}
        end = index_offset
    records = []
    at = 64
    while at + 40 <= end:
        magic, payload, count, crc, _first_seq, _first_exp, encoding = struct.unpack_from(
            "<4sIIIQqB", data, at)
        body = data[at + 40:at + 40 + payload]
        if magic != b"RTPB" or len(body) != payload:
            break  # torn tail
        header = bytearray(data[at:at + 40])
        header[12:16] = b"\0\0\0\0"
        if _crc32c(body, _crc32c(bytes(header))) != crc:
            break
        if encoding == 0:
            records += list(struct.iter_unpack("<QqqHHBBH", body))
        else:
            records += _decode_predicted(body, count)
        at += 40 + payload
    if trailer:
        assert at == end and trailer["records"] == len(records), "blocks do not match the index"
    return records, trailer


def read_samples(path):
    data = open(path, "rb").read()
    if data[:8] != b"RTPSMPL1":
        raise ValueError(f"{path}: not a samples file")
    version, = struct.unpack_from("<I", data, 8)
    if version == 2:
        return _read_v2(data)
    if version != 1:
        raise ValueError(f"{path}: unknown samples version {version}")
    body = data[64:]
    trailer = None
    if len(body) >= 32 and body[-32:-24] == b"RTPSEND1":
        _, count, dropped, flags, _ = struct.unpack_from("<8sQQII", body, len(body) - 32)
        trailer = {"records": count, "dropped": dropped, "interrupted": bool(flags & 1)}
        body = body[:-32]
    n = len(body) // 32
    return list(struct.iter_unpack("<QqqHHBBH", body[:n * 32])), trailer
