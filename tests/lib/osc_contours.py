"""Listens for TUIO 2.0 over UDP and checks the outlines in it, with its own
OSC decoder (standard library only; not the daemon's encoder).

    osc_contours.py PORT OUT.json [QUIET_S]

Creates OUT.json.ready once it listens.
Receives until nothing has come for QUIET_S seconds (default 3) after the
first packet, then writes OUT.json: counts of bundles, ocg and icg
messages, ptr messages by pressure, and problems. Each bundle must be
/tuio2/frm first and /tuio2/alv last; every ocg/icg must have the type
tags ",i" followed by an even, non-zero number of 'f', points in [0, 1),
a session that is alive in that bundle and whose tok/ptr/bnd came before
it in the same bundle. The contours of the last bundle of each frame are
kept (normalised points per session) for the caller to compare with truth.
Prints a summary line; exits 1 on a problem or when no contour came.
"""
import json
import socket
import struct
import sys
import time


def osc_string(b, off):
    end = b.index(b"\0", off)
    s = b[off:end].decode("ascii", "replace")
    return s, (end + 4) & ~3


def parse_message(b):
    addr, off = osc_string(b, 0)
    tags, off = osc_string(b, off)
    args = []
    for t in tags[1:]:
        if t == "i":
            args.append(struct.unpack(">i", b[off:off + 4])[0])
            off += 4
        elif t == "f":
            args.append(struct.unpack(">f", b[off:off + 4])[0])
            off += 4
        elif t == "s":
            s, off = osc_string(b, off)
            args.append(s)
        elif t == "t":
            args.append(struct.unpack(">Q", b[off:off + 8])[0])
            off += 8
        else:
            raise ValueError("type tag %r" % t)
    if off != len(b):
        raise ValueError("%s: %d bytes left over" % (addr, len(b) - off))
    return addr, tags, args


def parse_bundle(b):
    if b[:8] != b"#bundle\0":
        raise ValueError("not a bundle")
    off = 16
    msgs = []
    while off < len(b):
        n = struct.unpack(">I", b[off:off + 4])[0]
        off += 4
        msgs.append(parse_message(b[off:off + n]))
        off += n
    return msgs


def main(argv):
    port, out = int(argv[1]), argv[2]
    quiet = float(argv[3]) if len(argv) > 3 else 3.0
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    sock.bind(("127.0.0.1", port))
    sock.settimeout(0.2)
    open(out + ".ready", "w").close()
    stats = {"bundles": 0, "ocg": 0, "icg": 0, "ptr_touch": 0, "ptr_hover": 0, "problems": []}
    frames = {}
    last = None
    start = time.time()
    while True:
        try:
            data, _ = sock.recvfrom(65536)
        except socket.timeout:
            if last is not None and time.time() - last > quiet:
                break
            if last is None and time.time() - start > 20:
                break
            continue
        last = time.time()
        try:
            msgs = parse_bundle(data)
        except (ValueError, struct.error) as e:
            stats["problems"].append("undecodable packet: %s" % e)
            continue
        stats["bundles"] += 1
        if not msgs or msgs[0][0] != "/tuio2/frm" or msgs[-1][0] != "/tuio2/alv":
            stats["problems"].append("bundle not frm ... alv")
            continue
        fid = msgs[0][2][0]
        alive = set(msgs[-1][2])
        seen = set()
        contours = frames.setdefault(fid, {})
        for addr, tags, args in msgs[1:-1]:
            if addr in ("/tuio2/tok", "/tuio2/ptr", "/tuio2/bnd"):
                seen.add(args[0])
                if addr == "/tuio2/ptr":
                    stats["ptr_touch" if args[8] > 0 else "ptr_hover"] += 1
                continue
            if addr not in ("/tuio2/ocg", "/tuio2/icg"):
                continue
            stats[addr[-3:]] += 1
            nf = len(tags) - 2
            if not tags.startswith(",i") or set(tags[2:]) != {"f"} or nf % 2 or nf == 0:
                stats["problems"].append("%s tags %s" % (addr, tags))
                continue
            sid = args[0]
            if sid not in alive or sid not in seen:
                stats["problems"].append("%s for session %d not alive or not announced before it" % (addr, sid))
            pts = list(zip(args[1::2], args[2::2]))
            if any(not (0 <= v < 1) for p in pts for v in p):
                stats["problems"].append("%s point outside [0, 1)" % addr)
            contours.setdefault(str(sid), []).append({"hole": addr == "/tuio2/icg", "points": pts})
    stats["frames"] = {str(k): v for k, v in frames.items()}
    json.dump(stats, open(out, "w"))
    print("osc: %d bundles, %d ocg, %d icg, ptr %d touching %d hovering, %d problems%s"
          % (stats["bundles"], stats["ocg"], stats["icg"], stats["ptr_touch"], stats["ptr_hover"],
             len(stats["problems"]), "".join("\n  " + p for p in stats["problems"][:5])))
    return 1 if stats["problems"] or stats["ocg"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
