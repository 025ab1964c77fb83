#!/usr/bin/env python3
"""Smoke test for server.py (standard library only).  Exit status 0 when everything passes."""
import base64
import hashlib
import hmac
import json
import os
import socket
import struct
import subprocess
import sys
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "server.py")
MAIN_ID, MAIN_SEC = "AtlasMainFull", "sec-atlas-main-6f1d2c9e8b7a"
VIEW_ID, VIEW_SEC = "AtlasMainView", "sec-atlas-view-41b08e77d2c5"
MM_ID, MM_SEC = "AtlasMmKey", "sec-atlas-mm-9a3f5e0c1d24"
TFA_ID, TFA_SEC = "Boreal2faKey", "sec-boreal-2fa-c7e2a9145f60"
TFA_SECRET = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
DA_MAIN, DA_MM = "da-atlas-main-7Q2mX9vK", "da-atlas-mm-3Hf8Lw1P"


def totp(secret, t=None):
    key = base64.b32decode(secret)
    c = int((t or time.time()) // 30)
    mac = hmac.new(key, struct.pack(">Q", c), hashlib.sha1).digest()
    o = mac[-1] & 15
    return "%06d" % ((struct.unpack(">I", mac[o:o + 4])[0] & 0x7FFFFFFF) % 1000000)


def free_pair():
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        p = s.getsockname()[1]
        s2 = socket.socket()
        try:
            s2.bind(("127.0.0.1", p + 1))
        except OSError:
            s.close()
            continue
        s.close()
        s2.close()
        return p


class Srv:
    def __init__(self, faults=""):
        for attempt in range(6):
            self.port = free_pair()
            args = [sys.executable, SERVER, "--port", str(self.port)]
            if faults:
                args += ["--faults", faults]
            self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            line = self.p.stdout.readline()
            if b"listening" in line:
                break
            err = self.p.stderr.read()
            self.p.wait()
            if b"address already in use" not in err or attempt == 5:
                raise RuntimeError("server did not start: %r %r" % (line, err))
        self.da = self.port + 1

    def stop(self):
        self.p.terminate()
        rc = self.p.wait(5)
        assert rc == 0, "exit status %r" % rc

    # ---- HTTP ----
    def raw(self, target, headers=None, body=b"", port=None, verb="GET"):
        s = socket.create_connection(("127.0.0.1", port or self.port), timeout=5)
        h = {"Host": "127.0.0.1", "Connection": "close"}
        h.update(headers or {})
        if body:
            h["Content-Length"] = str(len(body))
        req = "%s %s HTTP/1.1\r\n" % (verb, target) + "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
        s.sendall(req.encode() + body)
        data = b""
        while True:
            c = s.recv(65536)
            if not c:
                break
            data += c
        s.close()
        head, _, b = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        return status, json.loads(b) if b else None

    def get(self, method, params=None, auth=None, headers=None):
        q = urllib.parse.urlencode(params or {})
        target = "/api/v2/" + method + ("?" + q if q else "")
        h = dict(headers or {})
        if auth:
            h["Authorization"] = auth
        return self.raw(target, h)

    def body(self, method, params, rid=1, auth=None, ctype="application/json"):
        b = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
        h = {"Content-Type": ctype} if ctype else {}
        if auth:
            h["Authorization"] = auth
        return self.raw("/api/v2/" + method, h, b)

    def signed(self, method, params, cid=MAIN_ID, sec=MAIN_SEC, nonce=None, ts=None, sign_uri=None):
        q = urllib.parse.urlencode(params or {})
        target = "/api/v2/" + method + ("?" + q if q else "")
        ts = ts or int(time.time() * 1000)
        nonce = nonce or os.urandom(6).hex()
        rd = "GET\n%s\n\n" % (sign_uri or target)
        sig = hmac.new(sec.encode(), ("%d\n%s\n%s" % (ts, nonce, rd)).encode(), hashlib.sha256).hexdigest()
        return self.raw(target, {"Authorization": "dtp-hmac-sha256 id=%s,ts=%d,nonce=%s,sig=%s" % (cid, ts, nonce,
                                                                                                   sig)})

    def token(self, cid=MAIN_ID, sec=MAIN_SEC, scope=None):
        p = {"grant_type": "client_credentials", "client_id": cid, "client_secret": sec}
        if scope:
            p["scope"] = scope
        st, r = self.get("public/auth", p)
        assert st == 200, r
        return r["result"]

    def ws(self):
        return WS(self.port)


def basic(cid, sec):
    return "Basic " + base64.b64encode(("%s:%s" % (cid, sec)).encode()).decode()


def bearer(t):
    return "Bearer " + t


class WS:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(("GET /ws/api/v2 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % key).encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += self.s.recv(1)
        assert b" 101 " in buf.split(b"\r\n")[0], buf
        acc = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC11B65").encode()).digest())
        assert acc in buf
        self.n = 0

    def frame(self, op, payload, fin=True):
        m = os.urandom(4)
        n = len(payload)
        h = bytes([(0x80 if fin else 0) | op])
        if n < 126:
            h += bytes([0x80 | n])
        elif n < 65536:
            h += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            h += bytes([0x80 | 127]) + struct.pack("!Q", n)
        self.s.sendall(h + m + bytes(b ^ m[i % 4] for i, b in enumerate(payload)))

    def recv_frame(self):
        def rd(k):
            d = b""
            while len(d) < k:
                c = self.s.recv(k - len(d))
                if not c:
                    raise EOFError
                d += c
            return d
        b1, b2 = rd(2)
        n = b2 & 0x7F
        if n == 126:
            n = struct.unpack("!H", rd(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", rd(8))[0]
        return b1 & 0x0F, rd(n)

    def call(self, method, params=None, fragmented=False, rid=None):
        self.n += 1
        msg = json.dumps({"jsonrpc": "2.0", "id": rid if rid is not None else self.n, "method": method,
                          "params": params or {}}).encode()
        if fragmented:
            self.frame(0x1, msg[:5], fin=False)
            self.frame(0x9, b"hb")   # ping interleaved between fragments
            self.frame(0x0, msg[5:], fin=True)
            op, d = self.recv_frame()
            assert op == 0xA and d == b"hb"
        else:
            self.frame(0x1, msg)
        op, d = self.recv_frame()
        assert op == 0x1, op
        return json.loads(d)

    def close(self):
        try:
            self.frame(0x8, struct.pack("!H", 1000))
            self.recv_frame()
        except Exception:
            pass
        self.s.close()


def sig_auth(srv, cid=MAIN_ID, sec=MAIN_SEC, age=0, nonce=None, data="", trailing=False, scope=None):
    ts = int(time.time() * 1000) - age
    nonce = nonce if nonce is not None else os.urandom(5).hex()
    msg = "%d\n%s\n%s" % (ts, nonce, data) + ("\n" if trailing else "")
    sig = hmac.new(sec.encode(), msg.encode(), hashlib.sha256).hexdigest()
    p = {"grant_type": "client_signature", "client_id": cid, "timestamp": ts, "signature": sig, "nonce": nonce}
    if data:
        p["data"] = data
    if scope:
        p["scope"] = scope
    return srv.get("public/auth", p)


def err(r):
    return (r.get("error") or {}).get("code")


# ---------------------------------------------------------------------------
# Functional checks on a clean server
# ---------------------------------------------------------------------------
def clean_checks():
    srv = Srv()
    try:
        t = srv.token()
        A = bearer(t["access_token"])
        assert t["token_type"] == "bearer" and isinstance(t["expires_in"], int) and "mainaccount" in t["scope"]
        # public methods, HTTP query and HTTP body
        for m, p in [("public/get_currencies", {}), ("public/get_historical_volatility", {"currency": "ETH"}),
                     ("public/get_book_summary_by_instrument", {"instrument_name": "BTC-PERPETUAL"})]:
            st, r = srv.get(m, p)
            assert st == 200 and isinstance(r["result"], list), (m, r)
            st, r = srv.body(m, p, rid=41)
            assert st == 200 and r["id"] == 41 and r["jsonrpc"] == "2.0", r
        st, r = srv.get("public/get_currencies")
        assert all(c["coin_type"] in ("BITCOIN", "ETHER") for c in r["result"])
        # private methods over HTTP bearer
        st, r = srv.get("private/get_transaction_log", {"currency": "BTC", "count": 250}, A)
        assert st == 200 and len(r["result"]["logs"]) == 250 and isinstance(r["result"]["continuation"], int)
        c = r["result"]["continuation"]
        st, r2 = srv.get("private/get_transaction_log", {"currency": "BTC", "count": 250, "continuation": c}, A)
        assert r2["result"]["continuation"] is None and len(r2["result"]["logs"]) == 433 - 250, r2
        ids = [e["id"] for e in r["result"]["logs"] + r2["result"]["logs"]]
        assert len(set(ids)) == 433
        st, r = srv.get("private/get_transaction_log", {"search": "expiry"}, A)
        exp = [e["instrument_name"] for e in r["result"]["logs"]]
        assert sorted(exp) == sorted(["BTC-26JUN26-150000-C", "ETH-27MAR26-6000-C", "BTC-30JAN26-60000-P"]), exp
        st, r = srv.get("private/get_trigger_order_history", {"currency": "BTC"}, A)
        assert len(r["result"]["entries"]) == 20 and isinstance(r["result"]["continuation"], str)
        st, r = srv.get("private/get_trigger_order_history", {"count": 1000}, A)
        assert len(r["result"]["entries"]) == 640 and r["result"]["continuation"] == ""
        st, r = srv.get("private/get_mmp_status", {"index_name": "eth_usdc"}, A)
        assert r["result"] and r["result"][0]["frozen_until"] == 0
        st, r = srv.get("private/get_mmp_status", {"block_rfq": "true"}, A)
        assert r["result"] and all(e["block_rfq"] for e in r["result"])
        st, r = srv.get("private/close_position", {"instrument_name": "ETH-PERPETUAL", "type": "market"}, A)
        assert st == 200 and r["result"]["order"]["order_state"] == "filled" and r["result"]["trades"], r
        st, r = srv.get("private/delete_member", {"member_id": 3102}, A)
        assert st == 200 and r["result"]["is_direct_access_allowed"] is True
        assert 3102 not in [m["member_id"] for m in r["result"]["members"]]
        st, r = srv.get("private/toggle_subaccount_login", {"sid": 71203, "state": "disable"}, A)
        assert r["result"] == "ok", r
        # logout is WebSocket only
        st, r = srv.get("private/logout", {}, A)
        assert st != 200 and "error" in r
        # Basic and signed header
        st, r = srv.get("private/get_mmp_status", {}, basic(MAIN_ID, MAIN_SEC))
        assert st == 200, r
        st, r = srv.signed("private/get_mmp_status", {"index_name": "btc_usd"})
        assert st == 200, r
        st, r = srv.get("private/get_mmp_status", {}, basic(MAIN_ID, "wrong"))
        assert st == 401
        # client_signature + data echo + nonce reuse
        st, r = sig_auth(srv, nonce="n-1", data="hello")
        assert st == 200 and r["result"]["data"] == "hello", r
        st, r = sig_auth(srv, nonce="n-1", data="hello")
        assert st == 401, r
        st, r = sig_auth(srv, age=61_000)
        assert st == 401, r
        # refresh
        st, r = srv.get("public/auth", {"grant_type": "refresh_token", "refresh_token": t["refresh_token"]})
        assert st == 200
        st, r2 = srv.get("private/get_mmp_status", {}, A)
        assert st == 401, r2
        # exchange and fork
        m = srv.token(scope="session:alpha")
        st, r = srv.get("public/exchange_token", {"refresh_token": m["refresh_token"], "subject_id": 71202})
        assert st == 200 and "mainaccount" not in r["result"]["scope"], r
        st, r = srv.get("public/fork_token", {"refresh_token": m["refresh_token"], "new_session_name": "beta"})
        assert st == 200 and r["result"]["sid"] != m["sid"], r
        # 2FA
        tf = bearer(srv.token(TFA_ID, TFA_SEC)["access_token"])
        st, r = srv.get("private/toggle_subaccount_login", {"sid": 72501, "state": "disable"}, tf)
        assert err(r) == 13668 and r["error"]["message"] == "security_key_authorization_error"
        st, r = srv.get("private/toggle_subaccount_login", {"sid": 72501, "state": "disable",
                                                            "second_factor": totp(TFA_SECRET)}, tf)
        assert r["result"] == "ok", r
        st, r = srv.get("private/delete_member", {"member_id": 4201}, tf)
        assert st == 403
        # WebSocket: all methods
        w = srv.ws()
        r = w.call("public/auth", {"grant_type": "client_credentials", "client_id": MAIN_ID,
                                   "client_secret": MAIN_SEC, "scope": "session:ws1"})
        assert r["result"]["sid"], r
        assert w.call("private/get_mmp_status", {})["result"] is not None       # remembered session token
        assert "logs" in w.call("private/get_transaction_log", {"currency": "ETH", "count": 3})["result"]
        assert "entries" in w.call("private/get_trigger_order_history", {"count": 3}, fragmented=True)["result"]
        assert w.call("public/get_currencies")["result"]
        assert w.call("public/get_historical_volatility", {"currency": "BTC"})["result"]
        assert w.call("public/get_book_summary_by_instrument", {"instrument_name": "SOL_USDC-PERPETUAL"})["result"]
        r = w.call("private/close_position", {"instrument_name": "BTC-25DEC26", "type": "limit", "price": 1})
        assert r["result"]["order"]["order_state"] == "filled", r
        assert w.call("private/delete_member", {"member_id": 3101})["result"]["members"] is not None
        assert w.call("private/toggle_subaccount_login", {"sid": 71203, "state": "enable"})["result"] == "ok"
        r = w.call("public/exchange_token", {"refresh_token": r and m["refresh_token"], "subject_id": 71201})
        assert "result" in r, r
        r = w.call("public/fork_token", {"refresh_token": m["refresh_token"], "new_session_name": "gamma"})
        assert "result" in r, r
        r = w.call("public/auth", {"grant_type": "refresh_token", "refresh_token": m["refresh_token"]})
        assert "result" in r, r
        r = w.call("nope/x", {})
        assert err(r) == -32601 and r["jsonrpc"] == "2.0"
        r = w.call("private/logout", {})
        assert "result" in r, r
        w.s.close()
        # signature over WS
        w = srv.ws()
        ts = int(time.time() * 1000)
        sig = hmac.new(MM_SEC.encode(), ("%d\nabc\n" % ts).encode(), hashlib.sha256).hexdigest()
        r = w.call("public/auth", {"grant_type": "client_signature", "client_id": MM_ID, "timestamp": ts,
                                   "nonce": "abc", "signature": sig})
        assert "result" in r, r
        r = w.call("private/get_mmp_status", {"access_token": r["result"]["access_token"]})
        assert "result" in r, r
        w.close()
        # Direct Access
        st, r = srv.raw("/api/v2/private/lock_portfolio", {"Authorization": "Bearer " + DA_MAIN}, port=srv.da)
        assert st == 200 and r["result"] == "ok", r
        st, r = srv.raw("/api/v2/private/get_open_orders", {"Authorization": "Bearer " + DA_MAIN}, port=srv.da)
        assert r["result"] == [], r
        st, r = srv.raw("/api/v2/private/submit_order?instrument_name=BTC-PERPETUAL&direction=buy&amount=10&price=1",
                        {"Authorization": "Bearer " + DA_MAIN}, port=srv.da)
        assert st == 409, r
        st, r = srv.raw("/api/v2/private/lock_portfolio", {"Authorization": "Bearer nope"}, port=srv.da)
        assert st == 401
        # robustness
        for body in (b"{", b"\xff\xfe", b"[1,2]", b'{"jsonrpc":"2.0","id":1,"method":"public/get_currencies"}',
                     b'{"jsonrpc":"2.0","id":"x","method":"public/get_currencies","params":{}}',
                     b"[" * 100000, b'{"jsonrpc":"2.0","id":1,"method":"public/get_currencies","params":{"a":1e999}}'):
            st, r = srv.raw("/api/v2/public/get_currencies", {}, body)
            assert st >= 400 and "error" in r, (body[:20], r)
        st, r = srv.get("private/get_transaction_log", {"count": "9" * 5000}, bearer(srv.token()["access_token"]))
        assert st == 400
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(b"GET /api/v2/public/get_curr")
        s.close()
        st, r = srv.get("public/get_currencies")
        assert st == 200
    finally:
        srv.stop()
    print("clean checks: ok")


# ---------------------------------------------------------------------------
# Fault probes: each returns a value that must differ between clean and faulty servers
# ---------------------------------------------------------------------------
def P(srv):
    return srv


def probe(name, srv):
    T = lambda **k: srv.token(**k)  # noqa: E731
    if name == "envelope_id_string":
        return type(srv.body("public/get_currencies", {}, rid=5)[1]["id"]).__name__
    if name == "ws_error_no_jsonrpc":
        return "jsonrpc" in srv.ws().call("nope/x", {})
    if name == "http_body_needs_content_type":
        return srv.body("public/get_book_summary_by_instrument", {"instrument_name": "BTC-PERPETUAL"}, ctype=None)[0]
    if name == "auth_sig_window_slack":
        return sig_auth(srv, age=62_000)[0]
    if name == "http_sig_nonce_per_uri":
        srv.signed("private/get_mmp_status", {"index_name": "btc_usd"}, nonce="same1")
        return srv.signed("private/get_mmp_status", {"index_name": "eth_usdc"}, nonce="same1")[0]
    if name == "sig_trailing_lf":
        return sig_auth(srv)[0]
    if name == "http_sig_path_only":
        return srv.signed("private/get_mmp_status", {"index_name": "btc_usd"})[0]
    if name == "basic_full_scope":
        return srv.get("private/close_position", {"instrument_name": "BTC-PERPETUAL", "type": "market"},
                       basic(VIEW_ID, VIEW_SEC))[0]
    if name == "refresh_keeps_old_token":
        t = T()
        srv.get("public/auth", {"grant_type": "refresh_token", "refresh_token": t["refresh_token"]})
        return srv.get("private/get_mmp_status", {}, bearer(t["access_token"]))[0]
    if name == "refresh_session_new_sid":
        t = T(scope="session:s1")
        r = srv.get("public/auth", {"grant_type": "refresh_token", "refresh_token": t["refresh_token"]})[1]
        return r["result"]["sid"] == t["sid"]
    if name == "token_type_capital":
        return T()["token_type"]
    if name == "expires_in_float":
        return type(T(scope="expires:600")["expires_in"]).__name__
    if name == "exchange_scope_escalation":
        t = T(cid=VIEW_ID, sec=VIEW_SEC)
        return srv.get("public/exchange_token", {"refresh_token": t["refresh_token"], "subject_id": 71201,
                                                 "scope": "account:read_write"})[0]
    if name == "fork_connection_token":
        t = T()
        return srv.get("public/fork_token", {"refresh_token": t["refresh_token"], "new_session_name": "f1"})[0]
    if name == "ws_remember_lost_on_error":
        w = srv.ws()
        w.call("public/auth", {"grant_type": "client_credentials", "client_id": MAIN_ID, "client_secret": MAIN_SEC,
                               "scope": "session:w"})
        w.call("public/get_book_summary_by_instrument", {"instrument_name": "NOPE"})
        return "result" in w.call("private/get_mmp_status", {})
    if name == "logout_over_http":
        return srv.get("private/logout", {}, bearer(T()["access_token"]))[0]
    if name == "logout_keeps_refresh":
        w = srv.ws()
        t = T()
        w.call("private/logout", {"access_token": t["access_token"]})
        return srv.get("public/auth", {"grant_type": "refresh_token", "refresh_token": t["refresh_token"]})[0]
    if name == "tfa_skip_http":
        return srv.get("private/toggle_subaccount_login", {"sid": 72501, "state": "disable"},
                       basic(TFA_ID, TFA_SEC))[0]
    if name == "tfa_wrong_code":
        w = srv.ws()
        t = T(cid=TFA_ID, sec=TFA_SEC)
        return err(w.call("private/toggle_subaccount_login", {"sid": 72501, "state": "disable",
                                                              "access_token": t["access_token"]}))
    if name == "toggle_keeps_session_tokens":
        s = T(cid=MM_ID, sec=MM_SEC, scope="session:mm")
        srv.get("private/toggle_subaccount_login", {"sid": 71201, "state": "disable"}, basic(MAIN_ID, MAIN_SEC))
        return srv.get("private/get_mmp_status", {}, bearer(s["access_token"]))[0]
    if name == "mmp_group_without_index":
        return srv.get("private/get_mmp_status", {"mmp_group": "sol_quotes_a"}, basic(MAIN_ID, MAIN_SEC))[0]
    if name == "mmp_empty_group_error":
        return srv.get("private/get_mmp_status", {"index_name": "btc_usd", "mmp_group": ""},
                       basic(MAIN_ID, MAIN_SEC))[0]
    if name == "mmp_block_rfq_trade_scope":
        return srv.get("private/get_mmp_status", {"block_rfq": "true"}, basic(VIEW_ID, VIEW_SEC))[0]
    if name == "mmp_zero_treated_expired":
        return len(srv.get("private/get_mmp_status", {"index_name": "eth_usdc"}, basic(MAIN_ID, MAIN_SEC))[1]
                   ["result"])
    if name == "toh_count_1000_rejected":
        return srv.get("private/get_trigger_order_history", {"count": 1000}, basic(MAIN_ID, MAIN_SEC))[0]
    if name == "toh_continuation_skip":
        A = basic(MAIN_ID, MAIN_SEC)
        r1 = srv.get("private/get_trigger_order_history", {"count": 5}, A)[1]["result"]
        r2 = srv.get("private/get_trigger_order_history", {"count": 5, "continuation": r1["continuation"]},
                     A)[1]["result"]
        r3 = srv.get("private/get_trigger_order_history", {"count": 10}, A)[1]["result"]
        return r1["entries"] + r2["entries"] == r3["entries"]
    if name == "toh_trigger_index":
        es = srv.get("private/get_trigger_order_history", {"count": 1000}, basic(MAIN_ID, MAIN_SEC))[1]["result"]
        return sorted({e["trigger"] for e in es["entries"]})
    if name == "txlog_count_251":
        return srv.get("private/get_transaction_log", {"count": 251}, basic(MAIN_ID, MAIN_SEC))[0]
    if name == "txlog_last_continuation_zero":
        return srv.get("private/get_transaction_log", {"currency": "SOL"}, basic(MAIN_ID, MAIN_SEC))[1][
            "result"]["continuation"]
    if name == "txlog_rate_http_only":
        w = srv.ws()
        t = T()
        codes = [err(w.call("private/get_transaction_log", {"count": 1, "access_token": t["access_token"]}))
                 for _ in range(8)]
        return 10028 in codes
    if name == "txlog_expiry_extra_settlement":
        ts = 1782460800000
        r = srv.get("private/get_transaction_log", {"start_timestamp": ts, "end_timestamp": ts},
                    basic(MAIN_ID, MAIN_SEC))[1]
        return len(r["result"]["logs"])
    if name == "txlog_sub_page2_main":
        A = basic(MAIN_ID, MAIN_SEC)
        r = srv.get("private/get_transaction_log", {"subaccount_id": 71201, "count": 5}, A)[1]["result"]
        r2 = srv.get("private/get_transaction_log", {"subaccount_id": 71201, "count": 5,
                                                     "continuation": r["continuation"]}, A)[1]["result"]
        return sorted({e["user_id"] for e in r2["logs"]})
    if name == "txlog_end_exclusive":
        ts = 1780315200000
        return len(srv.get("private/get_transaction_log", {"currency": "BTC", "start_timestamp": ts,
                                                           "end_timestamp": ts}, basic(MAIN_ID, MAIN_SEC))[1]
                   ["result"]["logs"])
    if name == "currencies_coin_type":
        return sorted({c["coin_type"] for c in srv.get("public/get_currencies")[1]["result"]})
    if name == "vol_last_ts_float":
        return type(srv.get("public/get_historical_volatility", {"currency": "BTC"})[1]["result"][-1][0]).__name__
    if name == "delete_member_no_mainaccount":
        return srv.get("private/delete_member", {"member_id": 3103}, basic(MM_ID, MM_SEC))[0]
    if name == "da_lock_blocks_rest":
        srv.raw("/api/v2/private/lock_portfolio", {"Authorization": "Bearer " + DA_MAIN}, port=srv.da)
        return srv.get("private/close_position", {"instrument_name": "BTC-PERPETUAL", "type": "market"},
                       basic(MAIN_ID, MAIN_SEC))[0]
    if name == "close_trade_id_int":
        r = srv.get("private/close_position", {"instrument_name": "BTC-PERPETUAL", "type": "limit", "price": 1},
                    basic(MAIN_ID, MAIN_SEC))[1]
        return type(r["result"]["trades"][0]["trade_id"]).__name__
    if name == "da_lock_other_portfolio":
        srv.raw("/api/v2/private/lock_portfolio", {"Authorization": "Bearer " + DA_MM}, port=srv.da)
        return srv.raw("/api/v2/private/submit_order?instrument_name=BTC-PERPETUAL&direction=buy&amount=10&price=1",
                       {"Authorization": "Bearer " + DA_MAIN}, port=srv.da)[0]
    if name == "book_summary_object":
        return type(srv.get("public/get_book_summary_by_instrument", {"instrument_name": "BTC-PERPETUAL"})[1]
                    ["result"]).__name__
    raise KeyError(name)


def run_probe(args):
    name, faults = args
    srv = Srv(faults)
    try:
        return probe(name, srv)
    except Exception as e:
        return "EXC %s: %s" % (type(e).__name__, e)
    finally:
        srv.stop()


def main():
    t0 = time.time()
    out = subprocess.run([sys.executable, SERVER, "--list-faults"], capture_output=True, text=True).stdout
    names = [ln.split("\t")[0] for ln in out.splitlines() if ln.strip()]
    assert all("\t" in ln for ln in out.splitlines())
    assert 30 <= len(names) <= 40, len(names)
    with ThreadPoolExecutor(12) as ex:
        fut_clean = ex.submit(clean_checks)
        jobs = [(n, "") for n in names] + [(n, n) for n in names]
        results = list(ex.map(run_probe, jobs))
        fut_clean.result()
    clean, faulty = results[:len(names)], results[len(names):]
    bad = 0
    for n, c, f in zip(names, clean, faulty):
        ok = c != f and not str(c).startswith("EXC")
        if not ok:
            bad += 1
        print("%-32s %-6s clean=%r fault=%r" % (n, "ok" if ok else "FAIL", c, f))
    print("faults: %d, distinguished: %d, time %.1fs" % (len(names), len(names) - bad, time.time() - t0))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
