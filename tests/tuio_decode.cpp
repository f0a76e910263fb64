// tuio_decode - a strict TUIO 1.1 / 2.0 decoder for end-to-end tests,
// built on Debian's oscpack (the OSC parser family the reference TUIO
// client embeds), independent of tabletrack's encoder and of liblo.
//
//   tuio_decode udp:PORT      [options]   listen on 127.0.0.1:PORT (0 = any free port)
//   tuio_decode tcp:HOST:PORT [options]   connect; 4-byte big-endian length framing
//   tuio_decode ws:HOST:PORT  [options]   connect; RFC 6455 client, binary frames
// options:
//   --seconds S      stop after S seconds (default 5)
//   --frames N       stop once N frames (distinct fseq) are seen (+150 ms for split bundles)
//   --max-size B     largest allowed packet (default 1472 on UDP, 65536 on streams)
//   --quiet          no per-frame lines
//   --blob-floats N  2Dblb set floats: 11 (TUIO 1.1, default) or 12 (tuio.md's tag string)
//
// stdout: {"listening":PORT} (udp) or {"connected":true} (tcp/ws) first,
// then one JSON line per frame:
//   {"fseq":N,"objects":{"SID":[class,x,y,a]},"cursors":{"SID":[x,y]},"blobs":{"SID":[x,y,a,w,h,f]}}
// and a final {"done":true,"frames":N,"packets":N,"max_size":N,"problems":N,...}.
// Problems go to stderr as "PROBLEM: ...". Exit 1 on any problem.
//
// Checked: every packet is a bundle of one profile only, or (a stream's
// frame) a bundle of such bundles, each then checked alone; element sizes and
// message lengths exactly match the type tags (no trailing bytes); TUIO 1.1
// order source, alive, set*, fseq (nothing after fseq) with exact type tags
// (source ,ss  alive ,s i*  2Dobj set ,siiffffffff  2Dcur set ,sifffff
// 2Dblb set ,sifffffffffff  fseq ,si); TUIO 2.0 order frm (,itis) first,
// tok/ptr/bnd with exact tags, alv (,i*) last; every set's session ID in
// that bundle's alive, no duplicates; fseq increasing per profile, equal
// only for consecutive split bundles with an identical alive; packet size
// <= max; values finite, angles in [0, 2pi), positions in [0, 1]. WebSocket:
// the handshake accept value (RFC 6455's own example key), server frames
// unmasked, a ping answered with the same payload.

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "osc/OscReceivedElements.h"

namespace
{

int g_problems = 0;
bool g_quiet = false;
size_t g_max_size = 1472;

void problem(const std::string &what)
{
	if (g_problems < 50)
		fprintf(stderr, "PROBLEM: %s\n", what.c_str());
	g_problems++;
}

double now_s()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Arg {
	char tag;
	int32_t i;
	float f;
	uint64_t t;
	std::string s;
};

struct Msg {
	std::string addr, tags;
	std::vector<Arg> args;
};

// Independent length check: address, tags and arguments must use exactly
// the element's bytes.
size_t osc_str_len(const char *p, size_t left)
{
	size_t n = strnlen(p, left);
	if (n == left)
		return SIZE_MAX;
	return (n + 4) & ~size_t(3);
}

bool exact_length(const char *p, size_t size)
{
	size_t a = osc_str_len(p, size);
	if (a == SIZE_MAX || a >= size)
		return false;
	size_t t = osc_str_len(p + a, size - a);
	if (t == SIZE_MAX || p[a] != ',')
		return false;
	size_t off = a + t;
	for (const char *tag = p + a + 1; *tag; tag++) {
		switch (*tag) {
		case 'i':
		case 'f':
			off += 4;
			break;
		case 't':
			off += 8;
			break;
		case 's': {
			if (off >= size)
				return false;
			size_t n = osc_str_len(p + off, size - off);
			if (n == SIZE_MAX)
				return false;
			off += n;
			break;
		}
		default:
			return false;
		}
		if (off > size)
			return false;
	}
	return off == size;
}

bool parse_message(const osc::ReceivedBundleElement &el, Msg &m)
{
	osc::ReceivedMessage rm(el);
	m.addr = rm.AddressPattern();
	m.tags.assign(rm.TypeTags(), rm.ArgumentCount());
	for (auto it = rm.ArgumentsBegin(); it != rm.ArgumentsEnd(); ++it) {
		Arg a{};
		a.tag = it->TypeTag();
		switch (a.tag) {
		case 'i':
			a.i = it->AsInt32();
			break;
		case 'f':
			a.f = it->AsFloat();
			break;
		case 't':
			a.t = it->AsTimeTag();
			break;
		case 's':
			a.s = it->AsString();
			break;
		default:
			problem(m.addr + ": unexpected OSC type '" + a.tag + "'");
			return false;
		}
		m.args.push_back(a);
	}
	if (!exact_length(el.Contents(), (size_t)el.Size())) {
		problem(m.addr + ": message length does not match its type tags");
		return false;
	}
	return true;
}

struct Profile {
	bool seen = false;
	int64_t last_fseq = 0;
	std::vector<int32_t> last_alive;
	std::map<int32_t, std::vector<float>> state; // sid -> values
	std::map<int32_t, int32_t> cls;              // 2Dobj / tok class
};

// TUIO 1.1 type tags. tuio.md's 2Dblb tag string shows 12 floats where
// its field list (and TUIO 1.1) has 11; --blob-floats 12 checks that form.
std::string kSetTags[3] = {"sii" + std::string(8, 'f'), "si" + std::string(5, 'f'),
                           "si" + std::string(11, 'f')};
const char *const kProfiles[3] = {"/tuio/2Dobj", "/tuio/2Dcur", "/tuio/2Dblb"};

std::map<std::string, Profile> g_prof;
std::set<int64_t> g_fseqs;
int64_t g_pending = INT64_MIN;
long g_frames = 0, g_packets = 0;
size_t g_largest = 0;

void check_values(const std::string &where, const std::vector<float> &v, int angle_at, int n_pos)
{
	for (size_t i = 0; i < v.size(); i++)
		if (!std::isfinite(v[i]))
			problem(where + ": non-finite value");
	for (int i = 0; i < n_pos && i < (int)v.size(); i++)
		if (v[i] < 0.0f || v[i] > 1.0f)
			problem(where + ": position outside [0,1]: " + std::to_string(v[i]));
	if (angle_at >= 0 && angle_at < (int)v.size() && !(v[angle_at] >= 0.0f && v[angle_at] < 6.2831855f))
		problem(where + ": angle outside [0,2pi): " + std::to_string(v[angle_at]));
}

std::string state_json(const Profile &p, int kind)
{
	std::string out = "{";
	bool first = true;
	char buf[64];
	for (auto &kv : p.state) {
		out += first ? "" : ",";
		first = false;
		out += "\"" + std::to_string(kv.first) + "\":[";
		const std::vector<float> &v = kv.second;
		std::vector<float> pick;
		if (kind == 0) { // class, x, y, a
			auto c = p.cls.find(kv.first);
			out += std::to_string(c == p.cls.end() ? -1 : c->second) + ",";
			pick.assign(v.begin(), v.begin() + 3);
		} else if (kind == 1) {
			pick.assign(v.begin(), v.begin() + 2);
		} else {
			pick.assign(v.begin(), v.begin() + 6);
		}
		for (size_t i = 0; i < pick.size(); i++) {
			snprintf(buf, sizeof buf, "%s%.6g", i ? "," : "", pick[i]);
			out += buf;
		}
		out += "]";
	}
	return out + "}";
}

void print_frame(int64_t fseq)
{
	g_frames++;
	if (g_quiet)
		return;
	bool t2 = g_prof.count("/tuio2");
	std::string line = "{\"fseq\":" + std::to_string(fseq);
	if (t2) {
		line += ",\"objects\":" + state_json(g_prof["/tuio2/tok"], 0) +
		        ",\"cursors\":" + state_json(g_prof["/tuio2/ptr"], 1) +
		        ",\"blobs\":" + state_json(g_prof["/tuio2/bnd"], 2);
	} else {
		line += ",\"objects\":" + state_json(g_prof[kProfiles[0]], 0) +
		        ",\"cursors\":" + state_json(g_prof[kProfiles[1]], 1) +
		        ",\"blobs\":" + state_json(g_prof[kProfiles[2]], 2);
	}
	printf("%s}\n", line.c_str());
	fflush(stdout);
}

void note_fseq(int64_t fseq)
{
	if (fseq == -1)
		return;
	if (g_pending != INT64_MIN && fseq != g_pending)
		print_frame(g_pending);
	g_pending = fseq;
	g_fseqs.insert(fseq);
}

void check_fseq(Profile &p, const std::string &addr, int64_t fseq, const std::vector<int32_t> &alive)
{
	if (fseq == -1)
		return;
	if (p.seen) {
		if (fseq < p.last_fseq)
			problem(addr + ": fseq went back from " + std::to_string(p.last_fseq) + " to " +
			        std::to_string(fseq));
		else if (fseq == p.last_fseq && alive != p.last_alive)
			problem(addr + ": bundles with the same fseq " + std::to_string(fseq) +
			        " carry different alive lists");
	}
	p.seen = true;
	p.last_fseq = fseq;
	p.last_alive = alive;
}

void apply_alive(Profile &p, const std::vector<int32_t> &alive)
{
	std::set<int32_t> a(alive.begin(), alive.end());
	for (auto it = p.state.begin(); it != p.state.end();)
		it = a.count(it->first) ? std::next(it) : p.state.erase(it);
}

std::vector<float> floats(const Msg &m, size_t from)
{
	std::vector<float> v;
	for (size_t i = from; i < m.args.size(); i++)
		if (m.args[i].tag == 'f')
			v.push_back(m.args[i].f);
	return v;
}

void handle_tuio1(const std::vector<Msg> &msgs)
{
	const std::string &addr = msgs[0].addr;
	int kind = -1;
	for (int k = 0; k < 3; k++)
		if (addr == kProfiles[k])
			kind = k;
	if (kind < 0) {
		problem("unknown profile " + addr);
		return;
	}
	auto word = [](const Msg &m) {
		return m.args.empty() || m.args[0].tag != 's' ? std::string("?") : m.args[0].s;
	};
	if (msgs.size() < 3 || word(msgs[0]) != "source" || msgs[0].tags != "ss") {
		problem(addr + ": bundle does not start with source ,ss");
		return;
	}
	const Msg &al = msgs[1];
	if (word(al) != "alive" || al.tags != "s" + std::string(al.tags.size() - 1, 'i')) {
		problem(addr + ": second message is not alive ,s i*");
		return;
	}
	const Msg &fs = msgs.back();
	if (word(fs) != "fseq" || fs.tags != "si") {
		problem(addr + ": bundle does not end with fseq ,si");
		return;
	}
	std::vector<int32_t> alive;
	for (size_t i = 1; i < al.args.size(); i++)
		alive.push_back(al.args[i].i);
	std::set<int32_t> alive_set(alive.begin(), alive.end());
	if (alive_set.size() != alive.size())
		problem(addr + ": duplicate session ID in alive");
	Profile &p = g_prof[addr];
	int64_t fseq = fs.args[1].i;
	note_fseq(fseq); // before applying: the previous frame is printed as it was
	check_fseq(p, addr, fseq, alive);
	apply_alive(p, alive);
	std::set<int32_t> seen;
	for (size_t i = 2; i + 1 < msgs.size(); i++) {
		const Msg &m = msgs[i];
		if (word(m) != "set") {
			problem(addr + ": '" + word(m) + "' between alive and fseq");
			continue;
		}
		if (m.tags != kSetTags[kind]) {
			problem(addr + ": set has tags ," + m.tags + ", expected ," + kSetTags[kind]);
			continue;
		}
		int32_t sid = m.args[1].i;
		if (!alive_set.count(sid))
			problem(addr + ": set for session " + std::to_string(sid) + " not in alive");
		if (!seen.insert(sid).second)
			problem(addr + ": two sets for session " + std::to_string(sid));
		std::vector<float> v = floats(m, 2);
		std::string where = addr + " set " + std::to_string(sid);
		if (kind == 0) {
			p.cls[sid] = m.args[2].i;
			check_values(where, v, 2, 2);
		} else if (kind == 1) {
			check_values(where, v, -1, 2);
		} else {
			check_values(where, v, 2, 2);
		}
		p.state[sid] = v;
	}
}

void handle_tuio2(const std::vector<Msg> &msgs)
{
	const Msg &frm = msgs[0];
	if (frm.addr != "/tuio2/frm" || frm.tags != "itis") {
		problem("TUIO 2 bundle does not start with /tuio2/frm ,itis");
		return;
	}
	const Msg &alv = msgs.back();
	if (msgs.size() < 2 || alv.addr != "/tuio2/alv" || alv.tags != std::string(alv.tags.size(), 'i')) {
		problem("TUIO 2 bundle does not end with /tuio2/alv ,i*");
		return;
	}
	if (frm.args[3].s.find(':') == std::string::npos)
		problem("/tuio2/frm source is not name:instance@address: " + frm.args[3].s);
	std::vector<int32_t> alive;
	for (auto &a : alv.args)
		alive.push_back(a.i);
	std::set<int32_t> alive_set(alive.begin(), alive.end());
	if (alive_set.size() != alive.size())
		problem("/tuio2/alv: duplicate session ID");
	Profile &p = g_prof["/tuio2"];
	int64_t fseq = frm.args[0].i;
	note_fseq(fseq);
	check_fseq(p, "/tuio2", fseq, alive);
	// A session may carry several components (a token and its bounds):
	// each component kind keeps its own state.
	for (const char *c : {"/tuio2/tok", "/tuio2/ptr", "/tuio2/bnd"})
		apply_alive(g_prof[c], alive);
	std::set<std::pair<std::string, int32_t>> seen; // a session may have one tok, one ptr and one bnd
	for (size_t i = 1; i + 1 < msgs.size(); i++) {
		const Msg &m = msgs[i];
		int kind;
		std::string want;
		if (m.addr == "/tuio2/tok") { // s_id tu_id c_id x y a X Y A m r
			kind = 0;
			want = "iii" + std::string(8, 'f');
		} else if (m.addr == "/tuio2/ptr") { // ... x y a shear radius press X Y P m p
			kind = 1;
			want = "iii" + std::string(11, 'f');
		} else if (m.addr == "/tuio2/bnd") { // s_id x y a w h f X Y A m r
			kind = 2;
			want = "i" + std::string(11, 'f');
		} else {
			problem("unexpected " + m.addr + " between frm and alv");
			continue;
		}
		if (m.tags != want) {
			problem(m.addr + " has tags ," + m.tags + ", expected ," + want);
			continue;
		}
		int32_t sid = m.args[0].i;
		if (!alive_set.count(sid))
			problem(m.addr + " for session " + std::to_string(sid) + " not in alv");
		if (!seen.insert({m.addr, sid}).second)
			problem(m.addr + ": two messages for session " + std::to_string(sid));
		std::vector<float> v = floats(m, 0);
		check_values(m.addr + " " + std::to_string(sid), v, kind == 1 ? -1 : 2, 2);
		Profile &dst = g_prof[m.addr];
		if (kind == 0)
			dst.cls[sid] = m.args[2].i;
		dst.state[sid] = v;
	}
}

bool handle_bundle(const osc::ReceivedBundle &b);

void handle_packet(const char *data, size_t size)
{
	g_packets++;
	if (size > g_largest)
		g_largest = size;
	if (size > g_max_size)
		problem("packet of " + std::to_string(size) + " bytes (> " + std::to_string(g_max_size) +
		        ")");
	try {
		osc::ReceivedPacket pk(data, size);
		if (!pk.IsBundle()) {
			problem("a bare message, not a bundle");
			return;
		}
		osc::ReceivedBundle b(pk);
		// A stream frame may be one bundle of bundles (one per profile,
		// or the split parts of a TUIO 2 frame): each inner bundle is
		// taken as if it had come alone. Deeper nesting or bundles mixed
		// with messages are refused.
		if (b.ElementCount() > 0 && b.ElementsBegin()->IsBundle()) {
			for (auto it = b.ElementsBegin(); it != b.ElementsEnd(); ++it) {
				if (!it->IsBundle()) {
					problem("a bundle mixes bundles and messages");
					return;
				}
				osc::ReceivedBundle inner(*it);
				if (!handle_bundle(inner))
					return;
			}
			return;
		}
		handle_bundle(b);
	} catch (osc::Exception &e) {
		problem(std::string("oscpack rejects the packet: ") + e.what());
	}
}

bool handle_bundle(const osc::ReceivedBundle &b)
{
	try {
		std::vector<Msg> msgs;
		for (auto it = b.ElementsBegin(); it != b.ElementsEnd(); ++it) {
			if (it->IsBundle()) {
				problem("bundle nested two deep");
				return false;
			}
			Msg m;
			if (!parse_message(*it, m))
				return false;
			msgs.push_back(m);
		}
		if (msgs.empty()) {
			problem("empty bundle");
			return false;
		}
		for (auto &m : msgs)
			if (m.addr != msgs[0].addr && m.addr.compare(0, 7, "/tuio2/") != 0) {
				problem("one bundle mixes " + msgs[0].addr + " and " + m.addr);
				return false;
			}
		if (msgs[0].addr.compare(0, 7, "/tuio2/") == 0) {
			for (auto &m : msgs)
				if (m.addr.compare(0, 7, "/tuio2/") != 0) {
					problem("TUIO 2 bundle holds " + m.addr);
					return false;
				}
			handle_tuio2(msgs);
		} else {
			handle_tuio1(msgs);
		}
	} catch (osc::Exception &e) {
		problem(std::string("oscpack rejects the packet: ") + e.what());
		return false;
	}
	return true;
}

// --- transports -------------------------------------------------------

int connect_to(const std::string &host, const std::string &port)
{
	addrinfo hints{}, *res = nullptr;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0)
		return -1;
	int fd = -1;
	for (addrinfo *a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

bool split_host_port(const std::string &s, std::string &host, std::string &port)
{
	size_t c = s.rfind(':');
	if (c == std::string::npos)
		return false;
	host = s.substr(0, c);
	port = s.substr(c + 1);
	if (!host.empty() && host[0] == '[')
		host = host.substr(1, host.size() - 2);
	return !host.empty() && !port.empty();
}

// Waits for input until `deadline`; returns false on timeout.
bool wait_readable(int fd, double deadline)
{
	double left = deadline - now_s();
	if (left <= 0)
		return false;
	pollfd p{fd, POLLIN, 0};
	int ms = (int)(left * 1000) + 1;
	return poll(&p, 1, ms > 100 ? 100 : ms) > 0;
}

struct Run {
	double deadline;
	long want_frames;
	bool lingering = false;
	void update()
	{
		if (want_frames > 0 && !lingering && (long)g_fseqs.size() >= want_frames) {
			lingering = true;
			double d = now_s() + 0.15;
			if (d < deadline)
				deadline = d;
		}
	}
};

void run_udp(int fd, Run &r)
{
	std::vector<char> buf(65536);
	while (now_s() < r.deadline) {
		if (!wait_readable(fd, r.deadline))
			continue;
		ssize_t n = recv(fd, buf.data(), buf.size(), 0);
		if (n > 0)
			handle_packet(buf.data(), (size_t)n);
		r.update();
	}
}

// A byte stream with a reassembly buffer, bounded.
struct Stream {
	int fd;
	std::vector<char> buf;
	bool eof = false;
	bool fill(double deadline)
	{
		if (!wait_readable(fd, deadline))
			return false;
		char tmp[65536];
		ssize_t n = recv(fd, tmp, sizeof tmp, 0);
		if (n <= 0) {
			eof = true;
			return false;
		}
		buf.insert(buf.end(), tmp, tmp + n);
		return true;
	}
};

void run_tcp(Stream &s, Run &r)
{
	while (now_s() < r.deadline && !s.eof) {
		while (s.buf.size() >= 4) {
			uint32_t n = (uint8_t)s.buf[0] << 24 | (uint8_t)s.buf[1] << 16 |
			             (uint8_t)s.buf[2] << 8 | (uint8_t)s.buf[3];
			if (n == 0 || n % 4 || n > (1u << 20)) {
				problem("bad TCP length prefix " + std::to_string(n));
				return;
			}
			if (s.buf.size() < 4 + (size_t)n)
				break;
			handle_packet(s.buf.data() + 4, n);
			s.buf.erase(s.buf.begin(), s.buf.begin() + 4 + n);
			r.update();
		}
		s.fill(r.deadline);
	}
	if (s.buf.size())
		problem("stream ended inside a packet (" + std::to_string(s.buf.size()) + " bytes left)");
}

void ws_send(int fd, uint8_t op, const std::string &payload)
{
	std::string f;
	f += (char)(0x80 | op);
	f += (char)(0x80 | payload.size()); // control payloads only: < 126
	const uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
	f.append((const char *)mask, 4);
	for (size_t i = 0; i < payload.size(); i++)
		f += (char)(payload[i] ^ mask[i & 3]);
	if (send(fd, f.data(), f.size(), MSG_NOSIGNAL) != (ssize_t)f.size())
		problem("cannot send a WebSocket frame");
}

bool g_pong = false;

void run_ws(Stream &s, Run &r)
{
	bool closed = false;
	while (now_s() < r.deadline && !s.eof && !closed) {
		while (s.buf.size() >= 2) {
			uint8_t b0 = (uint8_t)s.buf[0], b1 = (uint8_t)s.buf[1];
			if (b1 & 0x80) {
				problem("server frame is masked");
				return;
			}
			if (!(b0 & 0x80) || (b0 & 0x70)) {
				problem("server frame not FIN or with reserved bits");
				return;
			}
			uint64_t n = b1 & 0x7f;
			size_t h = 2;
			if (n == 126) {
				if (s.buf.size() < 4)
					break;
				n = (uint8_t)s.buf[2] << 8 | (uint8_t)s.buf[3];
				h = 4;
			} else if (n == 127) {
				if (s.buf.size() < 10)
					break;
				n = 0;
				for (int i = 0; i < 8; i++)
					n = n << 8 | (uint8_t)s.buf[2 + i];
				h = 10;
			}
			if (n > (1u << 20)) {
				problem("WebSocket frame too large");
				return;
			}
			if (s.buf.size() < h + n)
				break;
			const char *p = s.buf.data() + h;
			uint8_t op = b0 & 0x0f;
			if (op == 0x2) {
				handle_packet(p, n);
			} else if (op == 0xA) {
				if (std::string(p, n) == "tt")
					g_pong = true;
				else
					problem("pong with the wrong payload");
			} else if (op == 0x8) {
				closed = true;
			} else {
				problem("unexpected WebSocket opcode " + std::to_string(op));
			}
			s.buf.erase(s.buf.begin(), s.buf.begin() + h + n);
			r.update();
			if (closed)
				break;
		}
		if (!closed)
			s.fill(r.deadline);
	}
	if (!g_pong)
		problem("no pong for our ping");
	if (!closed && !s.eof)
		ws_send(s.fd, 0x8, std::string("\x03\xe8", 2));
}

bool ws_handshake(Stream &s, const std::string &host, const std::string &port, double deadline)
{
	// RFC 6455 section 1.3's example key, whose accept value is known.
	std::string req = "GET / HTTP/1.1\r\nHost: " + host + ":" + port +
	                  "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	                  "Sec-WebSocket-Protocol: tuio, other\r\n"
	                  "Sec-WebSocket-Version: 13\r\n\r\n";
	if (send(s.fd, req.data(), req.size(), MSG_NOSIGNAL) != (ssize_t)req.size())
		return false;
	for (;;) {
		std::string have(s.buf.begin(), s.buf.end());
		size_t end = have.find("\r\n\r\n");
		if (end != std::string::npos) {
			std::string head = have.substr(0, end + 2);
			s.buf.erase(s.buf.begin(), s.buf.begin() + end + 4);
			if (head.compare(0, 12, "HTTP/1.1 101") != 0) {
				problem("handshake answer is not 101: " + head.substr(0, head.find('\r')));
				return false;
			}
			if (head.find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n") ==
			    std::string::npos) {
				problem("wrong or missing Sec-WebSocket-Accept");
				return false;
			}
			if (head.find("Sec-WebSocket-Protocol: tuio\r\n") == std::string::npos)
				problem("requested subprotocol not echoed");
			return true;
		}
		if (s.buf.size() > 8192 || !s.fill(deadline)) {
			if (now_s() >= deadline || s.eof || s.buf.size() > 8192) {
				problem("no WebSocket handshake answer");
				return false;
			}
		}
	}
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr,
		        "usage: %s udp:PORT|tcp:HOST:PORT|ws:HOST:PORT [--seconds S] "
		        "[--frames N] [--max-size B] [--quiet]\n",
		        argv[0]);
		return 2;
	}
	double seconds = 5;
	long frames = 0;
	// Streams carry a whole frame in one packet: their limit is the
	// reference TCP receivers' read buffer, not a datagram.
	if (std::string(argv[1]).compare(0, 4, "udp:") != 0)
		g_max_size = 65536;
	for (int i = 2; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--seconds" && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (a == "--frames" && i + 1 < argc)
			frames = atol(argv[++i]);
		else if (a == "--max-size" && i + 1 < argc)
			g_max_size = (size_t)atol(argv[++i]);
		else if (a == "--blob-floats" && i + 1 < argc)
			kSetTags[2] = "si" + std::string((size_t)atoi(argv[++i]) == 11 ? 11 : 12, 'f');
		else if (a == "--quiet")
			g_quiet = true;
		else {
			fprintf(stderr, "unknown option %s\n", a.c_str());
			return 2;
		}
	}
	std::string spec = argv[1];
	Run r{now_s() + seconds, frames};
	if (spec.compare(0, 4, "udp:") == 0) {
		int fd = socket(AF_INET, SOCK_DGRAM, 0);
		int big = 1 << 22;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
		sockaddr_in sa{};
		sa.sin_family = AF_INET;
		sa.sin_port = htons((uint16_t)atoi(spec.c_str() + 4));
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		socklen_t sl = sizeof sa;
		if (fd < 0 || bind(fd, (sockaddr *)&sa, sizeof sa) != 0 ||
		    getsockname(fd, (sockaddr *)&sa, &sl) != 0) {
			fprintf(stderr, "cannot listen on %s: %s\n", spec.c_str(), strerror(errno));
			return 2;
		}
		printf("{\"listening\":%d}\n", ntohs(sa.sin_port));
		fflush(stdout);
		run_udp(fd, r);
		close(fd);
	} else if (spec.compare(0, 4, "tcp:") == 0 || spec.compare(0, 3, "ws:") == 0) {
		bool ws = spec[0] == 'w';
		std::string host, port;
		if (!split_host_port(spec.substr(ws ? 3 : 4), host, port)) {
			fprintf(stderr, "bad spec %s\n", spec.c_str());
			return 2;
		}
		int fd = connect_to(host, port);
		if (fd < 0) {
			fprintf(stderr, "cannot connect to %s: %s\n", spec.c_str(), strerror(errno));
			return 2;
		}
		Stream s{fd, {}};
		if (ws) {
			if (ws_handshake(s, host, port, r.deadline)) {
				printf("{\"connected\":true}\n");
				fflush(stdout);
				ws_send(fd, 0x9, "tt");
				run_ws(s, r);
			}
		} else {
			printf("{\"connected\":true}\n");
			fflush(stdout);
			run_tcp(s, r);
		}
		close(fd);
	} else {
		fprintf(stderr, "bad spec %s\n", spec.c_str());
		return 2;
	}
	if (g_pending != INT64_MIN)
		print_frame(g_pending);
	printf("{\"done\":true,\"frames\":%ld,\"packets\":%ld,\"max_size\":%zu,\"problems\":%d}\n", g_frames,
	       g_packets, g_largest, g_problems);
	return g_problems ? 1 : 0;
}
