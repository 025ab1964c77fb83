#!/usr/bin/env python3
"""Quick self-test of server.py (standard library only).

Starts the server on free ports, exercises every method over HTTP and
WebSocket, checks a set of rules, then checks that each seeded fault changes
behaviour (each fault probe passes on a clean server and fails with the fault).
Exit status 0 when everything holds.  Runs in well under 30 s.
"""
import base64
import concurrent.futures as cf
import hashlib
import hmac
import http.client
import json
import os
import secrets
import socket
import struct
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import server as S  # noqa: E402  (constants, TOTP helper)

MAIN = ("ix_main_rw", S.KEYS["ix_main_rw"]["secret"])
MAIN_RO = ("ix_main_ro", S.KEYS["ix_main_ro"]["secret"])
SUB = ("ix_sub_rw", S.KEYS["ix_sub_rw"]["secret"])
TFA = ("ix_tfa_rw", S.KEYS["ix_tfa_rw"]["secret"])
TFA_SUB = ("ix_tfa_sub", S.KEYS["ix_tfa_sub"]["secret"])
DA_MAIN = "dak_main_3f9b6c2e8a1d"


# ------------------------------------------------------------------ plumbing
def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Server:
    def __init__(self, faults=()):
        self.port = free_port()
        args = [sys.executable, os.path.join(HERE, "server.py"), "--port", str(self.port)]
        if faults:
            args += ["--faults", ",".join(faults)]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError("server exited")
                time.sleep(0.03)
        raise RuntimeError("server did not start")

    def stop(self):
        self.proc.terminate()
        try:
            return self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return None

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.stop()


class Client:
    def __init__(self, port):
        self.port = port

    def raw(self, verb, path, headers=None, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        c.request(verb, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            return r.status, json.loads(data)
        except ValueError:
            return r.status, data

    def get(self, method, params=None, token=None, headers=None):
        q = urllib.parse.urlencode(params or {}, quote_via=urllib.parse.quote)
        path = "/api/v2/" + method + ("?" + q if q else "")
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        return self.raw("GET", path, h)

    def body(self, method, params, rid=1, token=None):
        h = {"Content-Type": "application/json"}
        if token:
            h["Authorization"] = "Bearer " + token
        b = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.raw("GET", "/api/v2/" + method, h, b)

    def auth(self, key, scope=None):
        p = {"grant_type": "client_credentials", "client_id": key[0], "client_secret": key[1]}
        if scope:
            p["scope"] = scope
        st, r = self.get("public/auth", p)
        assert st == 200, r
        return r["result"]

    def ws(self):
        return WS(self.port)


class WS:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), 5)
        key = base64.b64encode(secrets.token_bytes(16)).decode()
        self.s.sendall((f"GET {S.WS_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.s.recv(4096)
            if not chunk:
                raise RuntimeError("handshake failed")
            buf += chunk
        head, self.buf = buf.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head
        acc = base64.b64encode(hashlib.sha1((key + S.WS_GUID).encode()).digest()).decode()
        assert acc.encode() in head
        self.n = 0

    def send_frame(self, op, payload, fin=True, mask=True):
        b0 = (0x80 if fin else 0) | op
        n = len(payload)
        if n < 126:
            hdr = struct.pack(">BB", b0, (0x80 if mask else 0) | n)
        elif n < 65536:
            hdr = struct.pack(">BBH", b0, (0x80 if mask else 0) | 126, n)
        else:
            hdr = struct.pack(">BBQ", b0, (0x80 if mask else 0) | 127, n)
        if mask:
            m = secrets.token_bytes(4)
            payload = bytes(c ^ m[i % 4] for i, c in enumerate(payload))
            hdr += m
        self.s.sendall(hdr + payload)

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        d, self.buf = self.buf[:n], self.buf[n:]
        return d

    def recv_frame(self):
        h = self._read(2)
        op, ln = h[0] & 0x0F, h[1] & 0x7F
        if ln == 126:
            ln = struct.unpack(">H", self._read(2))[0]
        elif ln == 127:
            ln = struct.unpack(">Q", self._read(8))[0]
        return op, self._read(ln)

    def recv_json(self):
        while True:
            op, d = self.recv_frame()
            if op == 1:
                return json.loads(d)
            if op == 8:
                raise EOFError("closed %r" % d[:2])

    def call(self, method, params=None, rid=None, token=None):
        self.n += 1
        p = dict(params or {})
        if token:
            p["access_token"] = token
        msg = {"jsonrpc": "2.0", "id": self.n if rid is None else rid, "method": method, "params": p}
        self.send_frame(1, json.dumps(msg).encode())
        return self.recv_json()

    def close(self):
        try:
            self.send_frame(8, struct.pack(">H", 1000))
            self.s.close()
        except OSError:
            pass


def sign(secret, msg):
    return hmac.new(secret.encode(), msg.encode(), hashlib.sha256).hexdigest()


def client_sig(c, key, ts=None, nonce=None, data=None):
    ts = S.now_ms() if ts is None else ts
    nonce = secrets.token_hex(8) if nonce is None else nonce
    p = {"grant_type": "client_signature", "client_id": key[0], "timestamp": ts, "nonce": nonce,
         "signature": sign(key[1], f"{ts}\n{nonce}\n{data or ''}")}
    if data is not None:
        p["data"] = data
    return c.get("public/auth", p)


def signed_get(c, key, method, params=None, nonce=None):
    q = urllib.parse.urlencode(params or {})
    uri = "/api/v2/" + method + ("?" + q if q else "")
    ts = str(S.now_ms())
    nonce = nonce or secrets.token_hex(6)
    sig = sign(key[1], f"{ts}\n{nonce}\nGET\n{uri}\n\n")
    h = {"Authorization": f"{S.SIG_SCHEME} id={key[0]},ts={ts},nonce={nonce},sig={sig}"}
    return c.raw("GET", uri, h)


def ok(r):
    st, b = r
    return st == 200 and isinstance(b, dict) and "result" in b


def err(r, code=None):
    st, b = r
    return isinstance(b, dict) and "error" in b and (code is None or b["error"]["code"] == code)


def res(r):
    return r[1]["result"]


TXLOG_ALL = {"currency": "BTC", "start_timestamp": 0, "end_timestamp": 4102444800000}


# ------------------------------------------------------------------ fault probes (True = behaviour is correct)
def p_ws_error_no_jsonrpc(c):
    w = c.ws()
    r = w.call("public/no_such_method")
    w.close()
    return r.get("jsonrpc") == "2.0" and "error" in r


def p_id_int32_wrap(c):
    w = c.ws()
    rid = 2 ** 31 + 5
    r = w.call("public/get_currencies", rid=rid)
    w.close()
    return r["id"] == rid


def p_body_get_status_202(c):
    st, b = c.body("public/get_currencies", {}, rid=7)
    return st == 200 and b["id"] == 7


def p_get_body_params_ignored(c):
    r = c.body("public/get_historical_volatility", {"currency": "BTC"})
    return ok(r) and len(res(r)) > 0


def p_ws_session_not_remembered(c):
    w = c.ws()
    a = w.call("public/auth", {"grant_type": "client_credentials", "client_id": MAIN[0],
                               "client_secret": MAIN[1], "scope": "session:smk"})
    r = w.call("private/get_mmp_status")
    w.close()
    return "result" in a and "result" in r


def p_basic_rejected(c):
    h = {"Authorization": "Basic " + base64.b64encode(f"{MAIN[0]}:{MAIN[1]}".encode()).decode()}
    return ok(c.get("private/get_mmp_status", headers=h))


def p_sig_header_path_only(c):
    return ok(signed_get(c, MAIN, "private/get_mmp_status", {"index_name": "btc_usd"}))


def p_sig_header_nonce_reusable(c):
    a = signed_get(c, MAIN, "private/get_mmp_status", nonce="fixednonce1")
    b = signed_get(c, MAIN, "private/get_mmp_status", nonce="fixednonce1")
    return ok(a) and err(b, 13008)


def p_client_sig_window_61s(c):
    return err(client_sig(c, MAIN, ts=S.now_ms() - 60500), 13007)


def p_client_sig_no_trailing_lf(c):
    return ok(client_sig(c, MAIN))


def p_client_sig_nonce_reusable(c):
    a = client_sig(c, MAIN, nonce="n-once")
    b = client_sig(c, MAIN, nonce="n-once")
    return ok(a) and err(b, 13008)


def p_client_sig_data_not_returned(c):
    r = client_sig(c, MAIN, data="hello world")
    return ok(r) and res(r).get("data") == "hello world"


def p_toh_scope_unchecked(c):
    t = c.auth(MAIN, "trade:none")["access_token"]
    return err(c.get("private/get_trigger_order_history", {"currency": "BTC"}, t), 13005)


def p_mmp_block_rfq_scope_trade(c):
    t = c.auth(MAIN, "block_rfq:none")["access_token"]
    return err(c.get("private/get_mmp_status", {"block_rfq": "true"}, t), 13005) and \
        ok(c.get("private/get_mmp_status", {"block_rfq": "false"}, t))


def p_toggle_scope_read_only(c):
    t = c.auth(MAIN, "account:read")["access_token"]
    return err(c.get("private/toggle_subaccount_login", {"sid": 70002, "state": "disable"}, t), 13005)


def p_delete_member_no_mainaccount(c):
    a = c.auth(MAIN)
    x = c.get("public/exchange_token", {"refresh_token": a["refresh_token"], "subject_id": 70002})
    return ok(x) and err(c.get("private/delete_member", {"member_id": 7}, res(x)["access_token"]), 13005)


def p_expiry_not_enforced(c):
    a = c.auth(MAIN, "expires:1")
    good = a["expires_in"] == 1 and ok(c.get("private/get_mmp_status", token=a["access_token"]))
    time.sleep(1.3)
    return good and err(c.get("private/get_mmp_status", token=a["access_token"]), 13003)


def p_token_type_capitalized(c):
    a = c.auth(MAIN)
    r = c.get("public/auth", {"grant_type": "refresh_token", "refresh_token": a["refresh_token"]})
    return a["token_type"] == "bearer" and ok(r) and res(r)["token_type"] == "bearer"


def p_scope_comma_separated(c):
    a = c.auth(MAIN, "expires:600")
    return "," not in a["scope"] and "expires:600" in a["scope"].split(" ")


def p_enabled_features_unknown(c):
    allowed = {"restricted_block_trades", "block_trade_approval"}
    return all(set(c.auth(k)["enabled_features"]) <= allowed for k in (MAIN, MAIN_RO, SUB))


def p_refresh_keeps_old_token(c):
    a = c.auth(MAIN)
    r = c.get("public/auth", {"grant_type": "refresh_token", "refresh_token": a["refresh_token"]})
    return ok(r) and err(c.get("private/get_mmp_status", token=a["access_token"]), 13004) and \
        ok(c.get("private/get_mmp_status", token=res(r)["access_token"]))


def p_refresh_same_refresh_token(c):
    a = c.auth(MAIN)
    r = c.get("public/auth", {"grant_type": "refresh_token", "refresh_token": a["refresh_token"]})
    return ok(r) and res(r)["refresh_token"] != a["refresh_token"]


def p_refresh_drops_session(c):
    a = c.auth(MAIN, "session:keep")
    r = c.get("public/auth", {"grant_type": "refresh_token", "refresh_token": a["refresh_token"]})
    return ok(r) and "session:keep" in res(r)["scope"].split() and res(r).get("sid") == a.get("sid")


def p_logout_over_http(c):
    a = c.auth(MAIN)
    return err(c.get("private/logout", token=a["access_token"]), 13015)


def p_logout_keeps_refresh(c):
    w = c.ws()
    a = w.call("public/auth", {"grant_type": "client_credentials", "client_id": MAIN[0],
                               "client_secret": MAIN[1], "scope": "session:lo"})["result"]
    lo = w.call("private/logout")
    w.close()
    r = c.get("public/auth", {"grant_type": "refresh_token", "refresh_token": a["refresh_token"]})
    return lo.get("result") == "ok" and err(r, 13004)


def p_fork_connection_token(c):
    a = c.auth(MAIN)
    return err(c.get("public/fork_token", {S.FORK_REFRESH_PARAM: a["refresh_token"], S.FORK_NAME_PARAM: "f2"}), 13011)


def p_fork_kills_parent(c):
    a = c.auth(MAIN, "session:parent")
    f = c.get("public/fork_token", {S.FORK_REFRESH_PARAM: a["refresh_token"], S.FORK_NAME_PARAM: "child"})
    return ok(f) and "session:child" in res(f)["scope"].split() and \
        ok(c.get("private/get_mmp_status", token=a["access_token"])) and \
        ok(c.get("private/get_mmp_status", token=res(f)["access_token"]))


def p_exchange_scope_exceeds(c):
    a = c.auth(MAIN, "trade:read")
    return err(c.get("public/exchange_token", {"refresh_token": a["refresh_token"], "subject_id": 70002,
                                               "scope": "trade:read_write"}), 13014)


def p_exchange_override_wrong_subject(c):
    a = c.auth(MAIN)
    x = c.get("public/exchange_token", {"refresh_token": a["refresh_token"], "subject_id": 70002,
                                        "scope": "trade:read"})
    if not ok(x):
        return False
    m = c.get("private/get_mmp_status", token=res(x)["access_token"])
    return ok(m) and [e["index_name"] for e in res(m)] == ["eth_usd"]


def p_tfa_not_required(c):
    t = c.auth(TFA)["access_token"]
    return err(c.get("private/toggle_subaccount_login", {"sid": 70011, "state": "disable"}, t), 13668)


def p_tfa_wrong_error_name(c):
    t = c.auth(TFA)["access_token"]
    r = c.get("private/toggle_subaccount_login", {"sid": 70011, "state": "disable"}, t)
    return err(r, 13668) and r[1]["error"]["message"] == "security_key_authorization_error"


def p_tfa_enable_unchecked(c):
    t = c.auth(TFA)["access_token"]
    return err(c.get("private/toggle_subaccount_login", {"sid": 70011, "state": "enable"}, t), 13668)


def p_toggle_disable_keeps_sessions(c):
    s = c.auth(SUB)["access_token"]
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/toggle_subaccount_login", {"sid": 70002, "state": "disable"}, t)
    return ok(r) and err(c.get("private/get_mmp_status", token=s), 13004)


def p_toggle_result_true(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/toggle_subaccount_login", {"sid": 70003, "state": "enable"}, t)
    return ok(r) and res(r) == "ok"


def p_mmp_group_without_index(c):
    t = c.auth(MAIN)["access_token"]
    return err(c.get("private/get_mmp_status", {"mmp_group": "mq_alpha"}, t), -32602)


def p_mmp_empty_group_error(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_mmp_status", {"index_name": "btc_usd", "mmp_group": ""}, t)
    return ok(r) and len(res(r)) == 1 and "mmp_group" not in res(r)[0]


def p_mmp_hides_frozen_zero(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_mmp_status", token=t)
    return ok(r) and any(e["frozen_until"] == 0 for e in res(r))


def p_toh_count_1000_rejected(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_trigger_order_history", {"currency": "BTC", "count": 1000}, t)
    return ok(r) and len(res(r)["entries"]) == 130 and res(r)["continuation"] == "none"


def p_toh_default_count_10(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_trigger_order_history", {"currency": "BTC"}, t)
    return ok(r) and len(res(r)["entries"]) == 20


def p_toh_trigger_index_page2(c):
    t = c.auth(MAIN)["access_token"]
    cont, seen = None, []
    for _ in range(10):
        p = {"currency": "BTC", "count": 40}
        if cont:
            p["continuation"] = cont
        r = c.get("private/get_trigger_order_history", p, t)
        if not ok(r):
            return False
        seen += res(r)["entries"]
        cont = res(r)["continuation"]
        if cont == "none":
            break
    return len(seen) == 130 and all(e["trigger"] in ("index_price", "mark_price", "last_price") for e in seen)


def p_txlog_count_250_rejected(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_transaction_log", dict(TXLOG_ALL, count=250), t)
    return ok(r) and len(res(r)["logs"]) == 194 and res(r)["continuation"] is None


def p_txlog_full_last_page_continuation(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_transaction_log", dict(TXLOG_ALL, count=194), t)
    return ok(r) and len(res(r)["logs"]) == 194 and res(r)["continuation"] is None


def p_txlog_end_exclusive(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_transaction_log", {"currency": "BTC", "start_timestamp": S.OTM_EXPIRY_TS,
                                              "end_timestamp": S.OTM_EXPIRY_TS}, t)
    return ok(r) and [e["type"] for e in res(r)["logs"]] == ["expiry"]


def p_txlog_subaccount_ignored(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_transaction_log", dict(TXLOG_ALL, subaccount_id=70002), t)
    return ok(r) and len(res(r)["logs"]) == 40 and all(e["user_id"] == 70002 for e in res(r)["logs"])


def p_txlog_expiry_extra_entry(c):
    t = c.auth(MAIN)["access_token"]
    good = True
    for cur, inst in S.OTM_EXPIRED.items():
        r = c.get("private/get_transaction_log", {"currency": cur, "start_timestamp": S.OTM_EXPIRY_TS - 3600000,
                                                  "end_timestamp": S.OTM_EXPIRY_TS + 86400000, "count": 250}, t)
        mine = [e for e in res(r)["logs"] if e["instrument_name"] == inst]
        good = good and [e["type"] for e in mine] == ["expiry"]
    return good


def p_txlog_two_year_cutoff(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_transaction_log", dict(TXLOG_ALL, count=1), t)
    return ok(r) and res(r)["logs"][0]["timestamp"] < 1577836800000


def p_txlog_no_rate_limit(c):
    t = c.auth(MAIN)["access_token"]
    rs = [c.get("private/get_transaction_log", dict(TXLOG_ALL, count=1), t) for _ in range(5)]
    return ok(rs[0]) and any(st == 429 and err((st, b), 10429) for st, b in rs)


def p_txlog_filter_ignored(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_transaction_log", dict(TXLOG_ALL, count=250, filter="deposit"), t)
    return ok(r) and res(r)["logs"] and all(e["type"] == "deposit" for e in res(r)["logs"])


def p_txlog_transfer_side_empty(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/get_transaction_log", dict(TXLOG_ALL, count=250, filter="transfer"), t)
    return ok(r) and res(r)["logs"] and all(e["side"] == "-" for e in res(r)["logs"])


def p_txlog_continuation_string_ws(c):
    w = c.ws()
    a = w.call("public/auth", {"grant_type": "client_credentials", "client_id": MAIN[0], "client_secret": MAIN[1]})
    r = w.call("private/get_transaction_log", dict(TXLOG_ALL, count=5), token=a["result"]["access_token"])
    w.close()
    cont = r["result"]["continuation"]
    return isinstance(cont, int) and not isinstance(cont, bool)


def p_currency_coin_type_erc20(c):
    r = c.get("public/get_currencies")
    return ok(r) and all(x["coin_type"] in ("BITCOIN", "ETHER") for x in res(r))


def p_vol_eth_seconds(c):
    r = c.get("public/get_historical_volatility", {"currency": "ETH"})
    return ok(r) and all(p[0] > 10 ** 12 for p in res(r))


def p_delete_member_no_da_check(c):
    t = c.auth(TFA)["access_token"]
    return err(c.get("private/delete_member", {"member_id": 1}, t), 11030)


def p_delete_member_keeps_deleted(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/delete_member", {"member_id": 7}, t)
    return ok(r) and 7 not in [m["mid"] for m in res(r)["members"]] and len(res(r)["members"]) == 5


def p_close_label_null(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/close_position", {"instrument_name": "ETH-PERPETUAL", "type": "market"}, t)
    return ok(r) and res(r)["order"]["label"] == ""


def p_close_limit_price_ignored(c):
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/close_position", {"instrument_name": "BTC-PERPETUAL", "type": "limit", "price": 90000}, t)
    return ok(r) and res(r)["order"]["price"] == 90000 and res(r)["trades"][0]["price"] == 90000


def p_da_accepts_access_token(c):
    t = c.auth(MAIN)["access_token"]
    return err(c.raw("GET", S.DA_LOCK_PATH, {"Authorization": "Bearer " + t}), 13020)


def p_da_lock_blocks_rest(c):
    lk = c.raw("GET", S.DA_LOCK_PATH, {"Authorization": "Bearer " + DA_MAIN})
    t = c.auth(MAIN)["access_token"]
    r = c.get("private/close_position", {"instrument_name": "BTC-27JUN25", "type": "market"}, t)
    return ok(lk) and res(lk) == "ok" and ok(r)


def p_book_summary_object(c):
    r = c.get("public/get_book_summary_by_instrument", {"instrument_name": "BTC-PERPETUAL"})
    return ok(r) and isinstance(res(r), list) and len(res(r)) == 1


PROBES = {name[2:]: fn for name, fn in globals().items() if name.startswith("p_")}


# ------------------------------------------------------------------ functional sweep on one clean server
def sweep(port):
    c = Client(port)
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)

    # envelope and transports
    st, b = c.get("public/get_currencies")
    check(st == 200 and b["jsonrpc"] == "2.0" and isinstance(b["id"], int), "HTTP query envelope")
    check(c.raw("POST", "/api/v2/public/get_currencies", {}, "{}")[0] == 405, "POST refused")
    check(err(c.raw("GET", "/api/v2/public/get_currencies", {}, "{not json"), -32700), "garbage body")
    check(err(c.get("public/nope"), -32601), "unknown method")
    check(err(c.get("public/get_currencies", {"x": "1"}), -32602), "unknown parameter")
    check(err(c.get("private/get_mmp_status"), 13001), "no credentials")
    big = c.raw("GET", "/api/v2/public/get_currencies", {}, "x" * (S.MAX_BODY + 10))
    check(big[0] == 413, "oversize body")
    # auth schemes
    a = c.auth(MAIN)
    tok = a["access_token"]
    check(a["token_type"] == "bearer" and a["scope"].split()[0] == "connection" and "mainaccount" in a["scope"],
          "token set")
    check(ok(client_sig(c, MAIN, data="x")), "client_signature")
    check(ok(signed_get(c, MAIN, "private/get_mmp_status", {"index_name": "btc_usd"})), "signed header")
    check(err(client_sig(c, MAIN, ts=S.now_ms() - 61000), 13007), "stale timestamp")
    # every method over HTTP
    check(ok(c.get("private/get_mmp_status", {"index_name": "all"}, tok)), "mmp all")
    r = c.get("private/get_trigger_order_history", {"currency": "BTC", "count": 20}, tok)
    check(ok(r) and len(res(r)["entries"]) == 20 and res(r)["continuation"] != "none", "toh page 1")
    r2 = c.get("private/get_trigger_order_history", {"currency": "BTC", "count": 20,
                                                     "continuation": res(r)["continuation"]}, tok)
    check(ok(r2) and res(r2)["entries"][0] != res(r)["entries"][-1]
          and res(r2)["entries"][0]["timestamp"] <= res(r)["entries"][-1]["timestamp"], "toh page 2")
    r = c.get("private/get_transaction_log", dict(TXLOG_ALL, count=100), tok)
    check(ok(r) and len(res(r)["logs"]) == 100 and isinstance(res(r)["continuation"], int), "txlog page 1")
    r2 = c.get("private/get_transaction_log", dict(TXLOG_ALL, count=100, continuation=res(r)["continuation"]), tok)
    check(ok(r2) and len(res(r2)["logs"]) == 94 and res(r2)["continuation"] is None
          and res(r2)["logs"][0]["id"] > res(r)["logs"][-1]["id"], "txlog page 2")
    types = {e["type"] for e in res(r)["logs"] + res(r2)["logs"]}
    check({"trade", "expiry", "delivery", "rebate"} <= types, "txlog types")
    rs = [c.get("private/get_transaction_log", dict(TXLOG_ALL, count=100), tok) for _ in range(2)]
    check(err(rs[-1], 10429) and rs[-1][0] == 429, "txlog throttled after burst of 3")
    check(ok(c.get("public/get_currencies")), "currencies")
    r = c.get("public/get_historical_volatility", {"currency": "USDC"})
    check(ok(r) and res(r) == [], "vol USDC empty")
    check(ok(c.get("public/get_book_summary_by_instrument", {"instrument_name": "ETH-27JUN25-3000-P"})), "book")
    r = c.get("private/close_position", {"instrument_name": "ETH-27JUN25-3000-P", "type": "market"}, tok)
    check(ok(r) and res(r)["order"]["order_state"] == "filled" and res(r)["order"]["direction"] == "buy", "close")
    check(err(c.get("private/close_position", {"instrument_name": "ETH-27JUN25-3000-P", "type": "market"}, tok),
              11040), "close consumed")
    r = c.get("private/delete_member", {"member_id": 3}, tok)
    check(ok(r) and res(r)["is_direct_access_allowed"] is True, "delete_member")
    check(err(c.get("private/delete_member", {"member_id": 3}, tok), 11031), "delete_member twice")
    r = c.raw("GET", S.DA_LOCK_PATH, {"Authorization": "Bearer " + DA_MAIN})
    check(ok(r) and res(r) == "ok", "lock_portfolio")
    # exchange / fork
    s = c.auth(MAIN, "session:sw")
    x = c.get("public/exchange_token", {"refresh_token": s["refresh_token"], "subject_id": 70003})
    check(ok(x) and "mainaccount" not in res(x)["scope"], "exchange_token")
    f = c.get("public/fork_token", {S.FORK_REFRESH_PARAM: s["refresh_token"], S.FORK_NAME_PARAM: "sw2"})
    check(ok(f) and res(f)["sid"] != s["sid"], "fork_token")
    # 2FA with the code
    tt = c.auth(TFA)["access_token"]
    r = c.get("private/toggle_subaccount_login", {"sid": 70011, "state": "disable", S.TFA_PARAM: S.totp()}, tt)
    check(ok(r) and res(r) == "ok", "2FA toggle")
    r = c.get("private/toggle_subaccount_login", {"sid": 70011, "state": "enable", S.TFA_PARAM: "000000"}, tt)
    check(err(r, 13669) or err(r, 13668), "2FA wrong code")
    # WebSocket: every public/private method, ping, fragments, garbage
    w = c.ws()
    a = w.call("public/auth", {"grant_type": "client_credentials", "client_id": SUB[0], "client_secret": SUB[1],
                               "scope": "session:ws1"})["result"]
    check(a["sid"] and "session:ws1" in a["scope"], "ws auth session")
    check("result" in w.call("private/get_mmp_status"), "ws remembered session")
    check("result" in w.call("private/get_trigger_order_history", {"currency": "BTC"}), "ws toh")
    check("result" in w.call("private/get_transaction_log", {"currency": "ETH", "start_timestamp": 0,
                                                             "end_timestamp": S.DATA_END}), "ws txlog")
    check("result" in w.call("public/get_currencies"), "ws currencies")
    check("result" in w.call("public/get_historical_volatility", {"currency": "ETH"}), "ws vol")
    check("result" in w.call("public/get_book_summary_by_instrument", {"instrument_name": "ETH-27JUN25"}), "ws book")
    check("result" in w.call("private/close_position", {"instrument_name": "ETH-27JUN25", "type": "limit"}),
          "ws close")
    check(w.call("private/delete_member", {"member_id": 7}).get("error", {}).get("code") == 13005, "ws delete sub")
    w.send_frame(9, b"hi")
    op, d = w.recv_frame()
    check(op == 10 and d == b"hi", "ws ping/pong")
    msg = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "public/get_currencies", "params": {}}).encode()
    w.send_frame(1, msg[:10], fin=False)
    w.send_frame(0, msg[10:20], fin=False)
    w.send_frame(9, b"mid")
    w.send_frame(0, msg[20:], fin=True)
    op, d = w.recv_frame()
    check(op == 10, "ws ping inside fragments")
    check(w.recv_json().get("id") == 99, "ws fragmented message")
    w.send_frame(1, b"{garbage")
    check(w.recv_json()["error"]["code"] == -32700, "ws garbage")
    w.send_frame(1, b'{"jsonrpc":"2.0","id":"x","method":"public/get_currencies","params":{}}')
    check(w.recv_json()["error"]["code"] == -32600, "ws string id")
    w.send_frame(1, b'{"jsonrpc":"2.0","id":5,"method":"public/get_currencies"}')
    check(w.recv_json()["error"]["code"] == -32600, "ws params required")
    c2 = c.ws()
    c2.call("public/auth", {"grant_type": "client_credentials", "client_id": MAIN[0], "client_secret": MAIN[1]})
    check(c2.call("private/get_mmp_status").get("error", {}).get("code") == 13001, "connection token not remembered")
    c2.close()
    lo = w.call("private/logout")
    check(lo.get("result") == "ok", "ws logout")
    w.close()
    w = c.ws()
    w.send_frame(1, b"{}", mask=False)
    op, d = w.recv_frame()
    check(op == 8 and struct.unpack(">H", d[:2])[0] == 1002, "ws unmasked frame closes 1002")
    w.close()
    # still alive after garbage
    check(ok(c.get("public/get_currencies")), "alive after garbage")
    return fails


def run_shared_clean(names):
    """Clean baseline for probes that do not collide: one server, run in sequence."""
    out = {}
    with Server() as srv:
        for n in names:
            try:
                out[n] = PROBES[n](Client(srv.port))
            except Exception as ex:
                out[n] = "exception: %s: %s" % (type(ex).__name__, ex)
    return out


# probes that need a fresh clean server (transaction log rate limit per account)
OWN_SERVER = lambda n: n.startswith("txlog_")  # noqa: E731
LAST = ("toggle_disable_keeps_sessions",)


def run_probe(name, faults):
    with Server(faults) as srv:
        try:
            return PROBES[name](Client(srv.port))
        except Exception as ex:  # a crash counts as "behaviour changed" only for the fault run
            return "exception: %s: %s" % (type(ex).__name__, ex)


def main():
    t0 = time.time()
    failures = []
    out = subprocess.run([sys.executable, os.path.join(HERE, "server.py"), "--list-faults"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    names = [ln.split("\t")[0] for ln in out]
    if len(names) < 32 or set(names) != set(PROBES):
        failures.append(f"fault list/probe mismatch: {sorted(set(names) ^ set(PROBES))}")
    # functional sweep + clean shutdown
    srv = Server()
    try:
        f = sweep(srv.port)
        failures += ["sweep: " + x for x in f]
    except Exception as ex:
        failures.append(f"sweep crashed: {type(ex).__name__}: {ex}")
    rc = srv.stop()
    if rc != 0:
        failures.append(f"SIGTERM exit status {rc}")
    print(f"functional sweep: {'ok' if not failures else failures} ({time.time() - t0:.1f} s)")
    # probes
    jobs = {}
    shared = [n for n in names if not OWN_SERVER(n) and n not in LAST] + [n for n in LAST if n in names]
    with cf.ThreadPoolExecutor(max_workers=10) as ex:
        shared_job = ex.submit(run_shared_clean, shared)
        for n in names:
            if OWN_SERVER(n):
                jobs[(n, "clean")] = ex.submit(run_probe, n, ())
            jobs[(n, "fault")] = ex.submit(run_probe, n, (n,))
        shared_res = shared_job.result()
        for n in names:
            clean = shared_res[n] if n in shared_res else jobs[(n, "clean")].result()
            fault = jobs[(n, "fault")].result()
            status = "ok" if (clean is True and fault is not True) else "FAIL"
            if status == "FAIL":
                failures.append(f"{n}: clean={clean!r} fault={fault!r}")
            print(f"  {status:4} {n:36} clean={clean!s:5} faulted={fault!s}")
    print(f"{len(names)} faults checked in {time.time() - t0:.1f} s; {len(failures)} failure(s)")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
