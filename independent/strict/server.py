#!/usr/bin/env python3
"""Stand-alone server for the Derivatives Trading Platform JSON-RPC API (interface 2.1.1).

Standard library only.  See README.md for accounts, fixtures and the choices made.
"""
import asyncio
import base64
import calendar
import hashlib
import hmac
import json
import math
import os
import random
import re
import secrets
import signal
import struct
import sys
import time
import urllib.parse

# ---------------------------------------------------------------------------
# Seeded faults: name -> (rule broken, section, nearest miss)
# ---------------------------------------------------------------------------
FAULTS = {
    "envelope_id_string": ("HTTP requests with a JSON-RPC body get the response id back as a string (Response id is an integer echoing the request id)", "1", True),
    "ws_error_no_jsonrpc": ("WebSocket error responses omit the jsonrpc member (jsonrpc is 2.0 in every response)", "9", True),
    "http_body_needs_content_type": ("a JSON-RPC body sent with GET is ignored unless Content-Type is application/json (a JSON-RPC body may be sent with the GET request)", "1", True),
    "auth_sig_window_slack": ("public/auth client_signature accepts timestamps up to 65 s old (timestamp valid for 60 seconds)", "5.5", True),
    "http_sig_nonce_per_uri": ("signed HTTP header nonce is single-use only per request URI (the nonce is single use)", "5.6", True),
    "sig_trailing_lf": ("client_signature string to sign requires a trailing LF after data (string = timestamp LF nonce LF data)", "5.5", True),
    "http_sig_path_only": ("signed HTTP header request data uses the path without the query string (request URI including the query string)", "5.6", True),
    "basic_full_scope": ("HTTP Basic requests get full scope, ignoring the key's maximum scope (methods state the scope they need)", "5.4", True),
    "refresh_keeps_old_token": ("refreshing a connection-scoped token leaves the previous access token valid (invalidates the previous one)", "5.3", True),
    "refresh_session_new_sid": ("refreshing a session token creates a new session using another slot (session stays the same, no extra slot)", "5.3", True),
    "token_type_capital": ("token_type is 'Bearer' (always bearer)", "2.1", True),
    "expires_in_float": ("expires_in is a float when an expires:<n> scope is requested (integer)", "2.1", True),
    "exchange_scope_escalation": ("exchange_token scope override may exceed the caller's permissions (must not exceed)", "4.2", True),
    "fork_connection_token": ("fork_token accepts a refresh token of a connection-only token (connection-only tokens cannot be forked)", "4.3", True),
    "ws_remember_lost_on_error": ("a WebSocket connection forgets its session token after any error response (connection remembers the session token)", "5.2", True),
    "logout_over_http": ("private/logout is accepted over HTTP (WebSocket only)", "4.4", True),
    "logout_keeps_refresh": ("private/logout invalidates the access token but not the refresh token (invalidates the tokens)", "4.4", True),
    "tfa_skip_http": ("second factor not required when toggle_subaccount_login is called over HTTP (rejected without it)", "5.7", True),
    "tfa_wrong_code": ("missing second factor answered with code 13666 (error 13668)", "7", False),
    "toggle_keeps_session_tokens": ("disabling a subaccount ends its connection tokens but not its session-scoped tokens (ends any active session at once)", "4.5", True),
    "mmp_group_without_index": ("mmp_group accepted without index_name (mmp_group requires index_name)", "4.6", True),
    "mmp_empty_group_error": ("empty mmp_group rejected (empty or omitted is not an error)", "4.6", True),
    "mmp_block_rfq_trade_scope": ("get_mmp_status with block_rfq=true checks trade:read instead of block_rfq:read", "4.6", True),
    "mmp_zero_treated_expired": ("a status with frozen_until 0 is treated as expired and not returned (frozen until manual reset)", "3", True),
    "toh_count_1000_rejected": ("get_trigger_order_history rejects count=1000 (count 1 to 1000)", "8", True),
    "toh_continuation_skip": ("trigger order history continuation skips one entry at each page boundary", "4.7", True),
    "toh_trigger_index": ("some trigger history entries carry trigger value 'index' (enumeration is authoritative)", "2.2", True),
    "txlog_count_251": ("get_transaction_log accepts count=251 (count 1 to 250)", "8", True),
    "txlog_last_continuation_zero": ("last transaction log page returns continuation 0 instead of null (null when no further page)", "4.8", True),
    "txlog_rate_http_only": ("transaction log rate limit enforced over HTTP only, not WebSocket (1 request per second)", "8", True),
    "txlog_expiry_extra_settlement": ("an out-of-the-money expired option also has a settlement entry (one expiry entry and nothing else)", "4.8", False),
    "txlog_sub_page2_main": ("with subaccount_id and a continuation, the next page comes from the caller's own log (returns that subaccount's transactions)", "4.8", True),
    "txlog_end_exclusive": ("entries exactly at end_timestamp are excluded (end_timestamp is the latest timestamp)", "4.8", True),
    "currencies_coin_type": ("USDC and USDT get coin_type 'ERC20' (coin_type is BITCOIN or ETHER)", "2.5", False),
    "vol_last_ts_float": ("the newest historical volatility point has a float timestamp (timestamp integer)", "2.9", True),
    "delete_member_no_mainaccount": ("delete_member accepted from a subaccount token without mainaccount scope", "4.11", True),
    "da_lock_blocks_rest": ("after lock_portfolio, close_position through the JSON-RPC API is rejected too (orders through REST unaffected)", "4.13", True),
    "close_trade_id_int": ("close_position with type limit returns trade_id as an integer (trade_id string)", "2.7", True),
    "da_lock_other_portfolio": ("lock_portfolio always locks the main account's portfolio, whichever Direct Access key is used (the authenticated session decides the portfolio)", "5.8", True),
    "book_summary_object": ("get_book_summary_by_instrument returns an object instead of an array", "4.14", False),
}
ACTIVE = set()


def F(name):
    return name in ACTIVE


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------
class RpcError(Exception):
    def __init__(self, code, name, reason, status=400, param=None):
        super().__init__(reason)
        self.code, self.name, self.reason, self.status, self.param = code, name, reason, status, param

    def obj(self):
        d = {"reason": self.reason}
        if self.param is not None:
            d["param"] = self.param
        return {"code": self.code, "message": self.name, "data": d}


def E_params(reason, param=None):
    return RpcError(-32602, "invalid_params", reason, 400, param)


def E_unauth(reason):
    return RpcError(13009, "unauthorized", reason, 401)


def E_forbidden(reason):
    return RpcError(13021, "forbidden", reason, 403)


def E_notfound(reason, param=None):
    return RpcError(11030, "not_found", reason, 404, param)


def E_sig(kind, reason):
    codes = {"signature": (13601, "invalid_signature"), "stale": (13602, "stale_timestamp"),
             "nonce": (13603, "nonce_already_used")}
    c, n = codes[kind]
    return RpcError(c, n, reason, 401)


def E_2fa(reason):
    if F("tfa_wrong_code"):
        return RpcError(13666, "security_key_authorization_error", reason, 403)
    return RpcError(13668, "security_key_authorization_error", reason, 403)


def E_rate():
    return RpcError(10028, "too_many_requests", "rate limit exceeded", 429)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------
def now_ms():
    return int(time.time() * 1000)


def num(x):
    """Numbers: integral values are emitted as JSON integers, others rounded to 8 decimals."""
    x = round(float(x), 8)
    if x == int(x) and abs(x) < 1e15:
        return int(x)
    return x


def ts_of(y, mo, d, h=8):
    return calendar.timegm((y, mo, d, h, 0, 0)) * 1000


def totp(secret_b32, t=None, step=30, digits=6):
    key = base64.b32decode(secret_b32)
    counter = int((t if t is not None else time.time()) // step)
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    off = mac[-1] & 0x0F
    code = (struct.unpack(">I", mac[off:off + 4])[0] & 0x7FFFFFFF) % (10 ** digits)
    return str(code).zfill(digits)


def safe_eq(a, b):
    return hmac.compare_digest(str(a).encode("utf-8", "surrogatepass"), str(b).encode("utf-8", "surrogatepass"))


def hmac_hex(secret, msg_bytes):
    return hmac.new(secret.encode(), msg_bytes, hashlib.sha256).hexdigest()


class Bucket:
    def __init__(self, rate, burst):
        self.rate, self.burst, self.tokens, self.t = rate, burst, float(burst), time.monotonic()

    def take(self):
        t = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (t - self.t) * self.rate)
        self.t = t
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


# ---------------------------------------------------------------------------
# Fixture data
# ---------------------------------------------------------------------------
FAMILIES = ("account", "trade", "wallet", "block_rfq")
LEVELS = {"none": 0, "read": 1, "read_write": 2}
TFA_SECRET = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
DEFAULT_EXPIRES = 1200
REFRESH_LIFETIME = 7 * 86400
SESSION_SLOTS = 6
MAX_KEYS = 8
TXLOG_RATE, TXLOG_BURST = 1.0, 5
PUB_RATE, PUB_BURST = 100.0, 300
AUTH_RATE, AUTH_BURST = 500.0, 1000

INSTRUMENTS = {}


def add_instr(name, kind, base, quote, settle, mark, expiry=None, spot=False, expired=False):
    INSTRUMENTS[name] = dict(name=name, kind=kind, base=base, quote=quote, currency=settle, mark=mark,
                             expiry=expiry, spot=spot, expired=expired)


add_instr("BTC-PERPETUAL", "future", "BTC", "USD", "BTC", 97250.5)
add_instr("ETH-PERPETUAL", "future", "ETH", "USD", "ETH", 3412.25)
add_instr("BTC-25DEC26", "future", "BTC", "USD", "BTC", 98410.0, ts_of(2026, 12, 25))
add_instr("ETH-25DEC26", "future", "ETH", "USD", "ETH", 3455.5, ts_of(2026, 12, 25))
add_instr("BTC-25DEC26-100000-C", "option", "BTC", "USD", "BTC", 0.0315, ts_of(2026, 12, 25))
add_instr("ETH-25DEC26-4000-P", "option", "ETH", "USD", "ETH", 0.1875, ts_of(2026, 12, 25))
add_instr("SOL_USDC-PERPETUAL", "future", "SOL", "USDC", "USDC", 187.42)
add_instr("XRP_USDC-PERPETUAL", "future", "XRP", "USDC", "USDC", 2.3141)
add_instr("BTC_USDC", "spot", "BTC", "USDC", "USDC", 97240.0, spot=True)
add_instr("BTC_USDT", "spot", "BTC", "USDT", "USDT", 97255.0, spot=True)
add_instr("BTC_EURR", "spot", "BTC", "EURR", "EURR", 89910.0, spot=True)
EXPIRED_OTM = [
    ("BTC-26JUN26-150000-C", "BTC", ts_of(2026, 6, 26)),
    ("ETH-27MAR26-6000-C", "ETH", ts_of(2026, 3, 27)),
    ("BTC-30JAN26-60000-P", "BTC", ts_of(2026, 1, 30)),
]
for _n, _c, _t in EXPIRED_OTM:
    add_instr(_n, "option", _c, "USD", _c, 0.0, _t, expired=True)

CURRENCY_INFO = [
    # code, long, coin_type, decimals, confirmations, fee, min_fee, network
    ("BTC", "Bitcoin", "BITCOIN", 8, 1, 0.0001, 0.0001, "BTC"),
    ("ETH", "Ethereum", "ETHER", 6, 12, 0.0012, 0.0008, "ETH"),
    ("USDC", "USD Coin", "ETHER", 6, 12, 2.5, 1.0, "ETH"),
    ("USDT", "Tether USD", "ETHER", 6, 12, 3.0, 1.0, "ETH"),
    ("EURR", "StablR Euro", "ETHER", 6, 12, 2.0, 1.0, "ETH"),
    ("SOL", "Solana", "ETHER", 6, 32, 0.01, 0.005, "SOL"),
    ("XRP", "Ripple", "ETHER", 6, 1, 0.25, 0.2, "XRP"),
    ("STETH", "Lido Staked Ether", "ETHER", 6, 12, 0.0015, 0.001, "ETH"),
    ("PAXG", "Pax Gold", "ETHER", 6, 12, 0.0004, 0.0002, "ETH"),
    ("USDE", "Ethena USDe", "ETHER", 6, 12, 2.0, 1.0, "ETH"),
]
TXLOG_CURRENCIES = ["BTC", "ETH", "STETH", "ETHW", "USDC", "USDT", "EURR", "SOL", "XRP", "USYC", "PAXG", "BNB", "USDE"]
TOH_CURRENCIES = ["BTC", "ETH", "USDC", "USDT", "EURR"]
MMP_REQ_INDEXES = ["btc_usd", "eth_usd", "btc_usdc", "eth_usdc", "ada_usdc", "algo_usdc", "avax_usdc", "bch_usdc",
                   "bnb_usdc", "doge_usdc", "dot_usdc", "hype_usdc", "link_usdc", "ltc_usdc", "near_usdc",
                   "paxg_usdc", "shib_usdc", "sol_usdc", "ton_usdc", "trx_usdc", "trump_usdc", "uni_usdc",
                   "xrp_usdc", "usde_usdc", "buidl_usdc", "btcdvol_usdc", "ethdvol_usdc", "btc_usdt", "eth_usdt",
                   "all"]
TX_KEYWORDS = ["trade", "maker", "taker", "open", "close", "liquidation", "buy", "sell", "withdrawal", "delivery",
               "settlement", "deposit", "transfer", "option", "future", "correction", "block_trade", "swap", "expiry"]

MAIN, SUB_MM, SUB_HEDGE, SUB_IDLE = 71200, 71201, 71202, 71203
TFA_MAIN, TFA_SUB = 72500, 72501


class State:
    def __init__(self):
        self.start = now_ms()
        rnd = random.Random(20261128)
        self.rnd = rnd
        self.users = {
            MAIN: dict(id=MAIN, username="atlas_main", main=None, tfa=False, da=True, login=True),
            SUB_MM: dict(id=SUB_MM, username="atlas_mm", main=MAIN, tfa=False, da=False, login=True),
            SUB_HEDGE: dict(id=SUB_HEDGE, username="atlas_hedge", main=MAIN, tfa=False, da=False, login=True),
            SUB_IDLE: dict(id=SUB_IDLE, username="atlas_idle", main=MAIN, tfa=False, da=False, login=True),
            TFA_MAIN: dict(id=TFA_MAIN, username="boreal_2fa", main=None, tfa=True, da=False, login=True),
            TFA_SUB: dict(id=TFA_SUB, username="boreal_desk", main=TFA_MAIN, tfa=True, da=False, login=True),
        }
        full = dict(account="read_write", trade="read_write", wallet="read_write", block_rfq="read_write")
        self.keys = {}
        self.add_key("AtlasMainFull", "sec-atlas-main-6f1d2c9e8b7a", MAIN, full, [], "main full")
        self.add_key("AtlasMainView", "sec-atlas-view-41b08e77d2c5", MAIN,
                     dict(account="read", trade="read", wallet="none", block_rfq="none"), ["restricted_block_trades"],
                     "main read-only")
        self.add_key("AtlasMmKey", "sec-atlas-mm-9a3f5e0c1d24", SUB_MM,
                     dict(account="read_write", trade="read_write", wallet="read", block_rfq="read"), [], "sub mm")
        self.add_key("Boreal2faKey", "sec-boreal-2fa-c7e2a9145f60", TFA_MAIN, full, ["block_trade_approval"], "2fa main")
        self.add_key("BorealDeskKey", "sec-boreal-desk-58d3b1f0aa92", TFA_SUB,
                     dict(account="read_write", trade="read_write", wallet="none", block_rfq="read"), [], "2fa sub")
        self.tokens = {}       # access token -> record
        self.refresh = {}      # refresh token -> record
        self.sessions = {}     # (client_id, user_id) -> {name: sid}
        self.sid_counter = 500
        self.nonces = {}       # key -> expiry ms
        self.buckets = {}
        self.txlog = {}        # user -> list (ascending id)
        self.next_log_id = 4_300_000
        self.user_seq = {}
        self.trade_seq = {}
        self.order_counter = 880_000_000
        self.trade_counter = 55_000_000
        self.positions = {
            MAIN: {"BTC-PERPETUAL": 12000, "ETH-PERPETUAL": -5000, "BTC-25DEC26": 3000,
                   "ETH-25DEC26-4000-P": 25, "SOL_USDC-PERPETUAL": 40},
            SUB_MM: {"BTC-PERPETUAL": -2000, "XRP_USDC-PERPETUAL": 1500},
            SUB_HEDGE: {}, SUB_IDLE: {},
            TFA_MAIN: {"ETH-PERPETUAL": 1000},
            TFA_SUB: {"BTC-25DEC26-100000-C": 2},
        }
        self.orders = {u: [] for u in self.users}   # open orders (JSON-RPC and DA)
        self.locked = set()
        self.da_keys = {"da-atlas-main-7Q2mX9vK": MAIN, "da-atlas-mm-3Hf8Lw1P": SUB_MM}
        self.members = {
            MAIN: [
                dict(member_id=3101, member_name="desk-alpha", is_active=True, owner_user_id=MAIN,
                     account_ids=[MAIN, SUB_MM], modified_at=ts_of(2026, 9, 14, 10)),
                dict(member_id=3102, member_name="desk-beta", is_active=False, owner_user_id=MAIN,
                     account_ids=[SUB_HEDGE], modified_at=ts_of(2026, 10, 2, 16)),
                dict(member_id=3103, member_name="night-ops", is_active=True, owner_user_id=MAIN,
                     account_ids=[MAIN], modified_at=ts_of(2026, 10, 20, 3)),
                dict(member_id=3104, member_name="x" * 20 + "-long-member-name-at-the-limit-" + "y" * 13,
                     is_active=True, owner_user_id=MAIN, account_ids=[MAIN, SUB_MM, SUB_HEDGE],
                     modified_at=ts_of(2026, 11, 1, 9)),
            ],
            TFA_MAIN: [dict(member_id=4201, member_name="boreal-floor", is_active=True, owner_user_id=TFA_MAIN,
                            account_ids=[TFA_MAIN], modified_at=ts_of(2026, 8, 1, 12))],
        }
        self.build_orders()
        self.build_txlog()
        self.build_toh()
        self.build_mmp()

    def add_key(self, cid, secret, user, scopes, features, label):
        self.keys[cid] = dict(client_id=cid, secret=secret, user=user, max=dict(scopes), features=list(features),
                              label=label)

    # -- orders --------------------------------------------------------
    def new_order_id(self):
        self.order_counter += 1
        return str(self.order_counter)

    def build_orders(self):
        base = ts_of(2026, 11, 27, 9)
        for user, instr, direction, amount, price, da in [
            (MAIN, "BTC-PERPETUAL", "buy", 1000, 95000.0, True),
            (MAIN, "ETH-PERPETUAL", "sell", 2000, 3550.0, True),
            (MAIN, "BTC-25DEC26", "buy", 500, 96000.5, True),
            (MAIN, "SOL_USDC-PERPETUAL", "sell", 10, 199.5, False),
            (SUB_MM, "BTC-PERPETUAL", "sell", 700, 99500.0, True),
            (SUB_MM, "XRP_USDC-PERPETUAL", "buy", 300, 2.25, True),
            (TFA_MAIN, "ETH-PERPETUAL", "buy", 100, 3300.0, False),
        ]:
            self.orders[user].append(self.make_order(instr, direction, amount, price, "limit", "open", 0, 0.0,
                                                     base, da=da))
            base += 60_000

    def make_order(self, instr, direction, amount, price, otype, state, filled, avg, ts, da=False):
        o = dict(web=False, api=True,
                 time_in_force="immediate_or_cancel" if otype == "market" else "good_til_cancelled",
                 replaced=False, reduce_only=False, post_only=False, price=num(price), order_type=otype,
                 order_state=state, order_id=self.new_order_id(), max_show=num(amount),
                 last_update_timestamp=ts, creation_timestamp=ts, label="", is_rebalance=False,
                 is_liquidation=False, instrument_name=instr, filled_amount=num(filled), average_price=num(avg),
                 direction=direction, amount=num(amount))
        o["via_direct_access"] = da
        return o

    # -- transaction log ------------------------------------------------
    def log_append(self, user, e):
        self.next_log_id += 1 + (self.next_log_id % 3)
        self.user_seq[user] = self.user_seq.get(user, 0) + 1
        e["id"] = self.next_log_id
        e["user_seq"] = self.user_seq[user]
        self.txlog.setdefault(user, []).append(e)
        return e

    def log_entry(self, user, ts, currency, typ, side, instr, amount, position, price, change, balance, **kw):
        u = self.users[user]
        e = dict(id=0, user_seq=0, user_id=user, username=u["username"], timestamp=ts, currency=currency,
                 type=typ, side=side, instrument_name=instr, amount=num(amount),
                 position=None if position is None else num(position),
                 price=None if price is None else num(price), price_currency=kw.get("price_currency", currency),
                 mark_price=num(kw.get("mark_price", price if price is not None else 0)),
                 commission=kw.get("commission"), cashflow=num(kw.get("cashflow", change)), change=num(change),
                 balance=num(balance), equity=num(balance + kw.get("upl", 0)), interest_pl=kw.get("interest_pl"),
                 total_interest_pl=num(kw.get("total_interest_pl", 0)), session_rpl=num(kw.get("rpl", 0)),
                 session_upl=num(kw.get("upl", 0)), trade_id=kw.get("trade_id"), order_id=kw.get("order_id"),
                 user_role=kw.get("user_role", "taker"), fee_role=kw.get("fee_role", kw.get("user_role", "taker")),
                 profit_as_cashflow=kw.get("pac", False), ip=kw.get("ip", ""), info=kw.get("info"))
        for extra in ("funding_rate_actual", "rfq_block_id", "delivery_index_price", "size_in_contracts",
                      "liquidation", "block_trade"):
            if extra in kw:
                e[extra] = kw[extra]
        if e["commission"] is not None:
            e["commission"] = num(e["commission"])
        if e["interest_pl"] is not None:
            e["interest_pl"] = num(e["interest_pl"])
        return e

    def build_txlog(self):
        rnd = self.rnd
        plan = [
            (MAIN, "BTC", 430, ["BTC-PERPETUAL", "BTC-25DEC26", "BTC-25DEC26-100000-C"]),
            (MAIN, "ETH", 270, ["ETH-PERPETUAL", "ETH-25DEC26", "ETH-25DEC26-4000-P"]),
            (MAIN, "USDC", 140, ["SOL_USDC-PERPETUAL", "XRP_USDC-PERPETUAL", "BTC_USDC"]),
            (MAIN, "USDT", 45, ["BTC_USDT"]),
            (MAIN, "EURR", 18, ["BTC_EURR"]),
            (MAIN, "SOL", 12, []),
            (SUB_MM, "BTC", 160, ["BTC-PERPETUAL", "BTC-25DEC26"]),
            (SUB_MM, "USDC", 60, ["XRP_USDC-PERPETUAL"]),
            (SUB_HEDGE, "USDC", 6, []),
            (TFA_MAIN, "ETH", 70, ["ETH-PERPETUAL"]),
            (TFA_SUB, "BTC", 35, ["BTC-25DEC26-100000-C"]),
        ]
        t0, t1 = ts_of(2026, 1, 5, 0), ts_of(2026, 11, 20, 0)
        raw = []
        for user, cur, n, instrs in plan:
            for i in range(n):
                raw.append((rnd.randint(t0, t1), user, cur, instrs, i))
        for name, cur, exp_ts in EXPIRED_OTM:
            raw.append((exp_ts, MAIN, cur, None, name))
        # a fixed boundary entry for timestamp filter checks
        raw.append((ts_of(2026, 6, 1, 12), MAIN, "BTC", ["BTC-PERPETUAL"], "boundary"))
        raw.sort(key=lambda r: (r[0], r[1], r[2]))
        balances = {}
        tid = {}
        for ts, user, cur, instrs, i in raw:
            key = (user, cur)
            bal = balances.get(key, 10.0 if cur in ("BTC", "ETH", "SOL") else 50000.0)
            ip = "203.0.113.%d" % (10 + user % 50)
            if instrs is None:   # OTM expiry
                e = self.log_entry(user, ts, cur, "expiry", "-", i, 5 if cur == "BTC" else 40, 0, 0, 0, bal,
                                   mark_price=0, commission=0, info={"expired_out_of_the_money": True})
                self.log_append(user, e)
                if F("txlog_expiry_extra_settlement"):
                    e2 = self.log_entry(user, ts, cur, "settlement", "long", i, 0, 0, 0, 0, bal, mark_price=0,
                                        info={"settlement_price": 0, "floating_pl": 0})
                    self.log_append(user, e2)
                continue
            r = rnd.random()
            if i == "boundary":
                r = 0.0
            if instrs and r < 0.62:
                instr = rnd.choice(instrs)
                if i == "boundary":
                    instr = instrs[0]
                meta = INSTRUMENTS[instr]
                direction = rnd.choice(["buy", "sell"])
                oc = rnd.choice(["open", "close"])
                is_opt = meta["kind"] == "option"
                amount = rnd.choice([1, 2, 5, 10, 25]) if is_opt or meta["spot"] or meta["currency"] == "USDC" \
                    else rnd.choice([100, 500, 1000, 2500, 10000])
                price = meta["mark"] * (1 + rnd.uniform(-0.08, 0.08))
                fee = round(amount * 0.00000003 + rnd.uniform(0, 0.0002), 8)
                change = -fee
                if is_opt:
                    change += (price * amount * (1 if direction == "sell" else -1))
                bal += change
                tid[cur] = tid.get(cur, 180000) + rnd.randint(1, 40)
                role = rnd.choice(["maker", "taker"])
                fee_role = role if rnd.random() > 0.05 else ("taker" if role == "maker" else "maker")
                src = rnd.choice(["api", "api", "web", "liquidation", "block_trade"])
                kw = dict(price_currency=meta["quote"] if meta["spot"] else ("BTC" if is_opt else "USD"),
                          mark_price=meta["mark"], commission=fee, trade_id="%s-%d" % (cur, tid[cur]),
                          order_id=str(70_000_000 + rnd.randint(0, 9_999_999)), user_role=role, fee_role=fee_role,
                          ip=ip, info="source: " + src, rpl=rnd.uniform(-0.01, 0.01), upl=rnd.uniform(-0.02, 0.02),
                          cashflow=change, interest_pl=None, size_in_contracts=num(amount / 10))
                if instr.endswith("PERPETUAL"):
                    kw["interest_pl"] = round(rnd.uniform(-0.0001, 0.0001), 8)
                    kw["total_interest_pl"] = round(rnd.uniform(-0.001, 0.001), 8)
                    kw["funding_rate_actual"] = round(rnd.uniform(-0.0003, 0.0003), 8)
                if src == "liquidation":
                    kw["liquidation"] = True
                if src == "block_trade":
                    kw["block_trade"] = True
                    kw["rfq_block_id"] = "BRFQ-%d" % rnd.randint(10000, 99999)
                pos = rnd.choice([-1, 1]) * amount * rnd.randint(0, 4)
                e = self.log_entry(user, ts, cur, "trade", "%s %s" % (oc, direction), instr, amount, pos, price,
                                   change, bal, **kw)
            elif instrs and r < 0.72 and any(not INSTRUMENTS[x]["spot"] and INSTRUMENTS[x]["kind"] == "future"
                                              for x in instrs):
                instr = rnd.choice([x for x in instrs if INSTRUMENTS[x]["kind"] == "future"])
                meta = INSTRUMENTS[instr]
                change = round(rnd.uniform(-0.02, 0.02), 8)
                bal += change
                pos = rnd.choice([1000, -1000, 2500, -300])
                if instr.endswith("PERPETUAL") or rnd.random() < 0.7:
                    sp = meta["mark"] * (1 + rnd.uniform(-0.1, 0.1))
                    e = self.log_entry(user, ts, cur, "settlement", "long" if pos > 0 else "short", instr, abs(pos),
                                       pos, sp, change, bal, mark_price=sp, commission=0, interest_pl=change / 3,
                                       total_interest_pl=change / 2, info={"settlement_price": num(sp),
                                                                           "floating_pl": num(change)},
                                       funding_rate_actual=round(rnd.uniform(-0.0003, 0.0003), 8), pac=True,
                                       price_currency="USD")
                else:
                    dp = meta["mark"] * (1 + rnd.uniform(-0.1, 0.1))
                    e = self.log_entry(user, ts, cur, "delivery", "close sell" if pos > 0 else "close buy", instr,
                                       abs(pos), 0, dp, change, bal, mark_price=dp, commission=0,
                                       price_currency="USD", delivery_index_price=num(dp * 0.9995),
                                       info={"delivery_price": num(dp)})
            else:
                typ = rnd.choice(["deposit", "deposit", "withdrawal", "transfer", "transfer", "swap", "correction",
                                  "rebate", "airdrop"])
                amt = round(rnd.uniform(0.01, 2.0) if cur in ("BTC", "ETH", "SOL") else rnd.uniform(10, 5000), 6)
                if typ == "withdrawal":
                    change = -amt
                    info = {"transaction": "0x" + "%064x" % rnd.getrandbits(256), "addr": self.addr(rnd, cur)}
                elif typ == "deposit":
                    change = amt
                    info = {"transaction": "0x" + "%064x" % rnd.getrandbits(256), "deposit_type": "onchain",
                            "addr": self.addr(rnd, cur)}
                elif typ == "transfer":
                    change = amt * rnd.choice([-1, 1])
                    other = rnd.choice([u for u in self.users if u != user])
                    info = {"transfer_type": "subaccount", "other_user_id": other,
                            "other_user": self.users[other]["username"]}
                elif typ == "swap":
                    change = amt * rnd.choice([-1, 1])
                    info = {"swap_pair": cur + "/USDC"}
                else:
                    change = round(rnd.uniform(-0.001, 0.001) if cur in ("BTC", "ETH", "SOL")
                                   else rnd.uniform(-5, 5), 6)
                    info = None if typ == "correction" else "program payout"
                bal += change
                e = self.log_entry(user, ts, cur, typ, "-", None, abs(change), None, None, change, bal,
                                   mark_price=0, info=info)
            balances[key] = bal
            self.log_append(user, e)

    @staticmethod
    def addr(rnd, cur):
        if cur == "BTC":
            return "bc1q" + "".join(rnd.choice("023456789acdefghjklmnpqrstuvwxyz") for _ in range(38))
        return "0x" + "%040x" % rnd.getrandbits(160)

    # -- trigger order history -----------------------------------------
    def build_toh(self):
        rnd = random.Random(77)
        self.toh = {}
        seq = 0
        instrs = ["BTC-PERPETUAL", "ETH-PERPETUAL", "BTC-25DEC26", "ETH-25DEC26", "BTC-25DEC26-100000-C",
                  "ETH-25DEC26-4000-P", "SOL_USDC-PERPETUAL", "XRP_USDC-PERPETUAL", "BTC_USDC", "BTC_USDT",
                  "BTC_EURR"]
        for user, n in ((MAIN, 640), (SUB_MM, 45), (TFA_MAIN, 30), (TFA_SUB, 8)):
            lst = []
            t0 = ts_of(2026, 2, 1, 0)
            for k in range(n):
                seq += 1
                instr = rnd.choice(instrs)
                meta = INSTRUMENTS[instr]
                kind = rnd.choice(["stop", "take", "trailing"]) if meta["kind"] == "future" else \
                    rnd.choice(["stop", "take"])
                ts = t0 + k * 36_000_000 + rnd.randint(0, 3_000_000)
                r = rnd.random()
                state = "triggered" if r < 0.55 else ("cancelled" if r < 0.85 else
                                                      "rejected:" + rnd.choice(["reduce_direction",
                                                                                "insufficient_funds",
                                                                                "post_only_reject"]))
                otype = rnd.choice(["limit", "market"])
                amount = rnd.choice([10, 100, 500, 2000]) if meta["kind"] == "future" and \
                    meta["currency"] != "USDC" else rnd.choice([1, 2, 5])
                e = dict(timestamp=ts,
                         trigger=rnd.choice(["index_price", "mark_price", "last_price"]),
                         trigger_order_id="%s-%d" % ({"stop": "SLTB", "take": "TPTB", "trailing": "TSTB"}[kind],
                                                     600000 + seq),
                         order_id=str(93_000_000 + seq * 7),
                         order_state=state,
                         request="cancel" if state == "cancelled" else "trigger:order",
                         instrument_name=instr,
                         direction=rnd.choice(["buy", "sell"]),
                         price=num(meta["mark"] * (1 + rnd.uniform(-0.05, 0.05))),
                         amount=num(amount),
                         last_update_timestamp=ts + rnd.randint(1000, 900_000),
                         post_only=otype == "limit" and rnd.random() < 0.2,
                         order_type=otype,
                         trigger_by_order=rnd.random() < 0.1,
                         linked_order_source=rnd.choice(["api", "web", "mobile"]))
                if meta["kind"] == "future" and kind != "trailing":
                    e["trigger_price"] = num(meta["mark"] * (1 + rnd.uniform(-0.06, 0.06)))
                if kind == "trailing":
                    e["offset"] = num(rnd.choice([50, 100, 250.5, 12.25]))
                if not meta["spot"]:
                    e["reduce_only"] = rnd.random() < 0.4
                if rnd.random() < 0.3:
                    e["label"] = "lbl-%d" % rnd.randint(1, 99)
                if rnd.random() < 0.08:
                    e["oco_ref"] = "OCO-%d" % rnd.randint(1000, 9999)
                if F("toh_trigger_index") and seq % 17 == 0:
                    e["trigger"] = "index"
                e["_seq"] = seq
                e["_cur"] = meta["currency"]
                lst.append(e)
            lst.sort(key=lambda x: (-x["timestamp"], -x["_seq"]))
            self.toh[user] = lst

    # -- MMP -----------------------------------------------------------
    def build_mmp(self):
        s = self.start
        self.mmp = {
            MAIN: [
                dict(index_name="btc_usd", frozen_until=s + 15 * 60_000, block_rfq=False),
                dict(index_name="eth_usdc", frozen_until=0, block_rfq=False),
                dict(index_name="sol_usdc", frozen_until=s + 20 * 60_000, block_rfq=False, mmp_group="sol_quotes_a"),
                dict(index_name="btc_usd", frozen_until=s + 10 * 60_000, block_rfq=True),
                dict(index_name="steth_usdc", frozen_until=s + 30 * 60_000, block_rfq=False),
                dict(index_name="eth_btc", frozen_until=s + 45 * 60_000, block_rfq=True),
                dict(index_name="btc_usdc", frozen_until=s - 3_600_000, block_rfq=False),
            ],
            SUB_MM: [dict(index_name="xrp_usdc", frozen_until=s + 5 * 60_000, block_rfq=False)],
            TFA_MAIN: [dict(index_name="eth_usd", frozen_until=0, block_rfq=False)],
        }

    # -- family helpers ------------------------------------------------
    def main_of(self, uid):
        u = self.users[uid]
        return u["main"] if u["main"] else uid

    def is_main(self, uid):
        return self.users[uid]["main"] is None


ST = None


# ---------------------------------------------------------------------------
# Scopes and tokens
# ---------------------------------------------------------------------------
class Auth:
    def __init__(self, user, client_id, scopes, mainaccount, token=None):
        self.user, self.client_id, self.scopes, self.mainaccount, self.token = user, client_id, scopes, \
            mainaccount, token

    def has(self, fam, level):
        return LEVELS[self.scopes.get(fam, "none")] >= LEVELS[level]


SCOPE_RE = re.compile(r"^(account|trade|wallet|block_rfq):(none|read|read_write)$")
SESSION_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,32}$")


def parse_scope(s):
    """Returns dict(fams, session, connection, expires, ip, mainaccount)."""
    out = dict(fams={}, session=None, connection=False, expires=None, ip=None, mainaccount=False)
    if s is None:
        return out
    for part in s.split():
        if part == "connection":
            out["connection"] = True
        elif part.startswith("session:"):
            name = part[8:]
            if not SESSION_RE.match(name):
                raise E_params("invalid session name", "scope")
            out["session"] = name
        elif part.startswith("expires:"):
            v = part[8:]
            if not v.isdigit() or len(v) > 9 or not (60 <= int(v) <= 2_592_000):
                raise E_params("expires must be an integer from 60 to 2592000 seconds", "scope")
            out["expires"] = int(v)
        elif part.startswith("ip:"):
            if not part[3:] or len(part) > 64:
                raise E_params("invalid ip scope", "scope")
            out["ip"] = part[3:]
        elif part == "mainaccount":
            out["mainaccount"] = True
        elif SCOPE_RE.match(part):
            f, lv = part.split(":")
            out["fams"][f] = lv
        else:
            raise E_params("unknown scope value '%s'" % part[:40], "scope")
    if out["connection"] and out["session"]:
        raise E_params("connection and session scopes are exclusive", "scope")
    return out


def grant_families(req_fams, maxs):
    if not req_fams:
        return dict(maxs)
    g = {}
    for f in FAMILIES:
        want = req_fams.get(f, "none")
        have = maxs.get(f, "none")
        g[f] = want if LEVELS[want] <= LEVELS[have] else have
    return g


def scope_string(rec):
    parts = ["session:" + rec["session"] if rec["session"] else "connection"]
    if rec["expires_req"]:
        parts.append("expires:%d" % rec["expires_req"])
    if rec["ip"]:
        parts.append("ip:" + rec["ip"])
    for f in FAMILIES:
        parts.append("%s:%s" % (f, rec["scopes"][f]))
    if rec["mainaccount"]:
        parts.append("mainaccount")
    return " ".join(parts)


def issue_token(user, client_id, scopes, session=None, sid=None, expires_req=None, ip=None, origin=None,
                features=None, extra=None):
    st = ST
    exp = expires_req or DEFAULT_EXPIRES
    rec = dict(access="at1." + secrets.token_urlsafe(24), refresh="rt1." + secrets.token_urlsafe(30), user=user,
               client_id=client_id, scopes={f: scopes.get(f, "none") for f in FAMILIES},
               mainaccount=st.is_main(user), session=session, sid=sid, expires_req=expires_req, ip=ip,
               expires_at=now_ms() + exp * 1000, refresh_expires_at=now_ms() + REFRESH_LIFETIME * 1000,
               revoked=False, refresh_used=False, origin=origin,
               features=features if features is not None else st.keys[client_id]["features"])
    st.tokens[rec["access"]] = rec
    st.refresh[rec["refresh"]] = rec
    return rec


def token_result(rec, extra=None):
    exp = rec["expires_req"] or DEFAULT_EXPIRES
    r = {"access_token": rec["access"], "token_type": "Bearer" if F("token_type_capital") else "bearer",
         "expires_in": float(exp) if (F("expires_in_float") and rec["expires_req"]) else exp,
         "refresh_token": rec["refresh"], "scope": scope_string(rec), "enabled_features": list(rec["features"])}
    if rec["sid"]:
        r["sid"] = rec["sid"]
    r["mfa_state"] = "enabled" if ST.users[rec["user"]]["tfa"] else "disabled"
    r["via_identity_provider"] = False
    if extra:
        r.update(extra)
    return r


def open_session(client_id, user, name, replace=True):
    key = (client_id, user)
    sess = ST.sessions.setdefault(key, {})
    if name in sess:
        if not replace:
            raise RpcError(13041, "session_exists", "a session with this name already exists", 409, "new_session_name")
        sid = sess[name]
        for r in list(ST.tokens.values()):
            if r["sid"] == sid:
                r["revoked"] = True
                r["refresh_used"] = True
        return sid
    if len(sess) >= SESSION_SLOTS:
        raise RpcError(13040, "session_limit_reached", "all %d session slots of this key are in use" % SESSION_SLOTS,
                       409)
    ST.sid_counter += 1
    sid = "sid-%d-%d" % (user, ST.sid_counter)
    sess[name] = sid
    return sid


def close_session(rec):
    key = (rec["client_id"], rec["user"])
    sess = ST.sessions.get(key, {})
    for n, s in list(sess.items()):
        if s == rec["sid"]:
            del sess[n]


def check_token(tok, ctx):
    rec = ST.tokens.get(tok) if isinstance(tok, str) else None
    if rec is None:
        raise E_unauth("unknown access token")
    if rec["revoked"]:
        raise E_unauth("access token has been invalidated")
    if rec["expires_at"] < now_ms():
        raise RpcError(13010, "token_expired", "access token expired", 401)
    if rec["ip"] and rec["ip"] != ctx.ip:
        raise RpcError(13025, "ip_not_allowed", "token is restricted to ip %s" % rec["ip"], 403)
    return rec


def use_nonce(key, ts):
    n = now_ms()
    if len(ST.nonces) > 50000:
        for k, v in list(ST.nonces.items()):
            if v < n:
                del ST.nonces[k]
    if key in ST.nonces and ST.nonces[key] >= n:
        raise E_sig("nonce", "nonce already used")
    ST.nonces[key] = max(ts, n) + 120_000


def check_ts(ts, slack=0):
    n = now_ms()
    if n - ts > 60_000 + slack:
        raise E_sig("stale", "timestamp older than 60 seconds")
    if ts - n > 10_000:
        raise E_sig("stale", "timestamp is in the future")


# ---------------------------------------------------------------------------
# Parameter validation
# ---------------------------------------------------------------------------
INT_LIMIT = 2 ** 63


def coerce(name, typ, v, from_query):
    if from_query:
        if typ in ("str", "code"):
            return v
        if typ == "int":
            if not re.fullmatch(r"-?\d{1,19}", v):
                raise E_params("%s must be an integer" % name, name)
            v = int(v)
        elif typ == "num":
            try:
                v = float(v)
            except ValueError:
                raise E_params("%s must be a number" % name, name)
            if not math.isfinite(v):
                raise E_params("%s must be finite" % name, name)
            return v
        elif typ == "bool":
            if v not in ("true", "false"):
                raise E_params("%s must be true or false" % name, name)
            return v == "true"
    if typ == "code":
        if isinstance(v, bool) or not isinstance(v, (str, int)) or (isinstance(v, int) and not 0 <= v < 10 ** 8):
            raise E_params("%s must be a string of digits" % name, name)
        return v
    if typ == "str":
        if not isinstance(v, str):
            raise E_params("%s must be a string" % name, name)
        if len(v) > 4096:
            raise E_params("%s is too long" % name, name)
    elif typ == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            raise E_params("%s must be an integer" % name, name)
        if abs(v) >= INT_LIMIT:
            raise E_params("%s is out of range" % name, name)
    elif typ == "num":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise E_params("%s must be a number" % name, name)
        if isinstance(v, int) and abs(v) >= INT_LIMIT:
            raise E_params("%s is out of range" % name, name)
        v = float(v)
        if not math.isfinite(v):
            raise E_params("%s must be finite" % name, name)
    elif typ == "bool":
        if not isinstance(v, bool):
            raise E_params("%s must be a boolean" % name, name)
    return v


def validate(spec, params, from_query):
    out = {}
    for k, v in params.items():
        if k not in spec:
            raise E_params("unexpected parameter '%s'" % str(k)[:64], str(k)[:64])
        typ, _req = spec[k]
        if v is None and not from_query:
            continue   # explicit null treated as omitted
        out[k] = coerce(k, typ, v, from_query)
    for k, (typ, req) in spec.items():
        if req and k not in out:
            raise E_params("missing required parameter '%s'" % k, k)
    return out


# ---------------------------------------------------------------------------
# Request context
# ---------------------------------------------------------------------------
class Ctx:
    def __init__(self, transport, ip, conn=None, headers=None, raw_uri="", body=b"", http_method="GET"):
        self.transport, self.ip, self.conn = transport, ip, conn
        self.headers = headers or {}
        self.raw_uri, self.body, self.http_method = raw_uri, body, http_method
        self.auth = None
        self.issued = None


def authenticate(ctx, params):
    if ctx.transport == "ws":
        tok = params.pop("access_token", None)
        if tok is not None:
            if not isinstance(tok, str):
                raise E_params("access_token must be a string", "access_token")
            rec = check_token(tok, ctx)
            if rec["session"]:
                ctx.conn.remembered = tok
        else:
            tok = ctx.conn.remembered
            if tok is None:
                raise E_unauth("private method needs an access token")
            try:
                rec = check_token(tok, ctx)
            except RpcError:
                ctx.conn.remembered = None
                raise
        return Auth(rec["user"], rec["client_id"], rec["scopes"], rec["mainaccount"], rec)
    h = ctx.headers.get("authorization")
    if not h:
        raise E_unauth("missing Authorization header")
    scheme, _, rest = h.strip().partition(" ")
    scheme = scheme.lower()
    rest = rest.strip()
    if scheme == "bearer":
        rec = check_token(rest, ctx)
        return Auth(rec["user"], rec["client_id"], rec["scopes"], rec["mainaccount"], rec)
    if scheme == "basic":
        try:
            cid, _, sec = base64.b64decode(rest, validate=True).decode("utf-8").partition(":")
        except Exception:
            raise RpcError(13004, "invalid_credentials", "malformed Basic credentials", 401)
        key = ST.keys.get(cid)
        if not key or not safe_eq(key["secret"], sec):
            raise RpcError(13004, "invalid_credentials", "invalid client_id or client_secret", 401)
        sc = dict(key["max"])
        if F("basic_full_scope"):
            sc = {f: "read_write" for f in FAMILIES}
        return Auth(key["user"], cid, sc, ST.is_main(key["user"]))
    if scheme == "dtp-hmac-sha256":
        fields = {}
        for part in rest.split(","):
            k, eq, v = part.strip().partition("=")
            if not eq:
                raise RpcError(13004, "invalid_credentials", "malformed signed header", 401)
            fields[k] = v
        if set(fields) != {"id", "ts", "nonce", "sig"}:
            raise RpcError(13004, "invalid_credentials", "signed header needs id, ts, nonce and sig", 401)
        key = ST.keys.get(fields["id"])
        if not key:
            raise RpcError(13004, "invalid_credentials", "unknown client id", 401)
        if not re.fullmatch(r"\d{1,16}", fields["ts"]):
            raise E_sig("stale", "ts must be an integer in ms")
        ts = int(fields["ts"])
        check_ts(ts)
        uri = ctx.raw_uri
        if F("http_sig_path_only"):
            uri = uri.split("?", 1)[0]
        req_data = ctx.http_method.upper().encode() + b"\n" + uri.encode("latin-1", "replace") + b"\n" + \
            ctx.body + b"\n"
        msg = fields["ts"].encode() + b"\n" + fields["nonce"].encode() + b"\n" + req_data
        if not safe_eq(hmac_hex(key["secret"], msg), fields["sig"]):
            raise E_sig("signature", "signature does not match")
        nk = ("n", fields["id"], fields["nonce"])
        if F("http_sig_nonce_per_uri"):
            nk = nk + (uri,)
        use_nonce(nk, ts)
        return Auth(key["user"], fields["id"], dict(key["max"]), ST.is_main(key["user"]))
    raise E_unauth("unsupported Authorization scheme")


def need(ctx, fam, level):
    if not ctx.auth.has(fam, level):
        raise E_forbidden("method needs scope %s:%s" % (fam, level))


def need_main(ctx):
    if not ctx.auth.mainaccount:
        raise RpcError(13031, "mainaccount_required", "method needs the mainaccount scope", 403)


def check_2fa(ctx, params):
    user = ST.users[ctx.auth.user]
    if not user["tfa"]:
        return
    if F("tfa_skip_http") and ctx.transport == "http":
        return
    code = params.get("second_factor")
    if isinstance(code, int):
        code = "%06d" % code
    if code is None:
        raise E_2fa("this method needs the second factor (parameter second_factor)")
    t = time.time()
    if code not in (totp(TFA_SECRET, t), totp(TFA_SECRET, t - 30), totp(TFA_SECRET, t + 30)):
        raise E_2fa("second factor code is not valid")


# ---------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------
METHODS = {}


def method(name, spec, private=False, ws_only=False):
    def deco(fn):
        METHODS[name] = dict(fn=fn, spec=spec, private=private, ws_only=ws_only)
        return fn
    return deco


@method("public/auth", {"grant_type": ("str", True), "client_id": ("str", False), "client_secret": ("str", False),
                        "refresh_token": ("str", False), "timestamp": ("int", False), "signature": ("str", False),
                        "nonce": ("str", False), "data": ("str", False), "scope": ("str", False),
                        "state": ("str", False)})
def m_auth(p, ctx):
    gt = p["grant_type"]
    extra = {}
    if "state" in p:
        extra["client_state"] = p["state"]
    if gt in ("client_credentials", "client_signature"):
        if "client_id" not in p:
            raise E_params("client_id is required for %s" % gt, "client_id")
        key = ST.keys.get(p["client_id"])
        if gt == "client_credentials":
            if "client_secret" not in p:
                raise E_params("client_secret is required for client_credentials", "client_secret")
            if not key or not safe_eq(key["secret"], p["client_secret"]):
                raise RpcError(13004, "invalid_credentials", "invalid client_id or client_secret", 401)
        else:
            for req in ("timestamp", "signature"):
                if req not in p:
                    raise E_params("%s is required for client_signature" % req, req)
            if not key:
                raise RpcError(13004, "invalid_credentials", "unknown client_id", 401)
            check_ts(p["timestamp"], 5000 if F("auth_sig_window_slack") else 0)
            nonce = p.get("nonce", "")
            msg = "%d\n%s\n%s" % (p["timestamp"], nonce, p.get("data", ""))
            if F("sig_trailing_lf"):
                msg += "\n"
            if not safe_eq(hmac_hex(key["secret"], msg.encode("utf-8", "surrogatepass")), p["signature"]):
                raise E_sig("signature", "signature does not match")
            nk = ("n", p["client_id"], nonce if nonce else "ts:%d" % p["timestamp"])
            use_nonce(nk, p["timestamp"])
            if "data" in p:
                extra["data"] = p["data"]
        sc = parse_scope(p.get("scope"))
        scopes = grant_families(sc["fams"], key["max"])
        sid = open_session(key["client_id"], key["user"], sc["session"]) if sc["session"] else None
        rec = issue_token(key["user"], key["client_id"], scopes, sc["session"], sid, sc["expires"], sc["ip"])
    elif gt == "refresh_token":
        if "refresh_token" not in p:
            raise E_params("refresh_token is required for refresh_token grant", "refresh_token")
        old = ST.refresh.get(p["refresh_token"])
        if not old or old["refresh_used"]:
            raise E_unauth("invalid refresh token")
        if old["refresh_expires_at"] < now_ms():
            raise E_unauth("refresh token expired")
        if old["session"] and old["sid"] not in ST.sessions.get((old["client_id"], old["user"]), {}).values():
            raise E_unauth("session of this refresh token has ended")
        old["refresh_used"] = True
        sid, session = old["sid"], old["session"]
        if session and F("refresh_session_new_sid"):
            session = session + "-r%d" % (ST.sid_counter + 1)
            sid = open_session(old["client_id"], old["user"], session)
        if not session and not F("refresh_keeps_old_token"):
            old["revoked"] = True
        rec = issue_token(old["user"], old["client_id"], old["scopes"], session, sid, old["expires_req"], old["ip"],
                          old["origin"], old["features"])
    else:
        raise E_params("grant_type must be client_credentials, client_signature or refresh_token", "grant_type")
    ctx.issued = rec
    return token_result(rec, extra)


def refresh_rec(tok):
    rec = ST.refresh.get(tok)
    if not rec or rec["refresh_used"] or rec["revoked"] or rec["refresh_expires_at"] < now_ms():
        raise E_unauth("invalid or used refresh token")
    if rec["session"] and rec["sid"] not in ST.sessions.get((rec["client_id"], rec["user"]), {}).values():
        raise E_unauth("session of this refresh token has ended")
    return rec


@method("public/exchange_token", {"refresh_token": ("str", True), "subject_id": ("int", True),
                                  "scope": ("str", False)})
def m_exchange(p, ctx):
    rec = refresh_rec(p["refresh_token"])
    origin = rec["origin"] or (rec["user"] if ST.is_main(rec["user"]) else None)
    if origin is None:
        raise E_forbidden("only tokens of a main account (or derived from one) can be exchanged")
    subj = p["subject_id"]
    if subj not in ST.users or ST.main_of(subj) != origin:
        raise E_notfound("subject_id is not an account of this main account", "subject_id")
    sc = parse_scope(p.get("scope"))
    scopes = dict(rec["scopes"])
    if sc["fams"]:
        for f, lv in sc["fams"].items():
            if LEVELS[lv] > LEVELS[rec["scopes"][f]] and not F("exchange_scope_escalation"):
                raise E_forbidden("requested scope %s:%s exceeds the caller's permissions" % (f, lv))
        scopes = {f: sc["fams"].get(f, "none") for f in FAMILIES}
    key = ST.keys[rec["client_id"]]
    sid = open_session(rec["client_id"], subj, sc["session"]) if sc["session"] else None
    new = issue_token(subj, rec["client_id"], scopes, sc["session"], sid, sc["expires"] or rec["expires_req"],
                      sc["ip"] or rec["ip"], origin, key["features"])
    ctx.issued = new
    return token_result(new)


@method("public/fork_token", {"refresh_token": ("str", True), "new_session_name": ("str", True)})
def m_fork(p, ctx):
    rec = refresh_rec(p["refresh_token"])
    if not rec["session"] and not F("fork_connection_token"):
        raise RpcError(13045, "connection_token_not_forkable", "connection-only tokens cannot be forked", 400,
                       "refresh_token")
    name = p["new_session_name"]
    if not SESSION_RE.match(name):
        raise E_params("invalid session name", "new_session_name")
    sid = open_session(rec["client_id"], rec["user"], name, replace=False)
    new = issue_token(rec["user"], rec["client_id"], rec["scopes"], name, sid, rec["expires_req"], rec["ip"],
                      rec["origin"], rec["features"])
    ctx.issued = new
    return token_result(new)


@method("private/logout", {"all_sessions": ("bool", False)}, private=True, ws_only=True)
def m_logout(p, ctx):
    a = ctx.auth
    n = 0
    victims = []
    if p.get("all_sessions"):
        victims = [r for r in ST.tokens.values() if r["client_id"] == a.client_id and r["user"] == a.user]
    elif a.token:
        if a.token["sid"]:
            victims = [r for r in ST.tokens.values() if r["sid"] == a.token["sid"]]
        else:
            victims = [a.token]
    for r in victims:
        if not r["revoked"]:
            n += 1
        r["revoked"] = True
        if not F("logout_keeps_refresh"):
            r["refresh_used"] = True
        if r["sid"]:
            close_session(r)
    if ctx.conn is not None:
        ctx.conn.remembered = None
        ctx.conn.close_after = True
    return {"invalidated_tokens": n}


@method("private/toggle_subaccount_login", {"sid": ("int", True), "state": ("str", True),
                                            "second_factor": ("code", False)}, private=True)
def m_toggle(p, ctx):
    need(ctx, "account", "read_write")
    if p["state"] not in ("enable", "disable"):
        raise E_params("state must be enable or disable", "state")
    sub = p["sid"]
    if sub not in ST.users or ST.users[sub]["main"] != ctx.auth.user:
        raise E_notfound("sid is not a subaccount of the caller", "sid")
    check_2fa(ctx, p)
    u = ST.users[sub]
    if p["state"] == "disable":
        u["login"] = False
        for r in ST.tokens.values():
            if r["user"] == sub:
                if F("toggle_keeps_session_tokens") and r["session"]:
                    continue
                r["revoked"] = True
                r["refresh_used"] = True
        if not F("toggle_keeps_session_tokens"):
            for k in list(ST.sessions):
                if k[1] == sub:
                    ST.sessions[k] = {}
    else:
        u["login"] = True
    return "ok"


@method("private/get_mmp_status", {"index_name": ("str", False), "mmp_group": ("str", False),
                                   "block_rfq": ("bool", False)}, private=True)
def m_mmp(p, ctx):
    blk = p.get("block_rfq", False)
    if blk and not F("mmp_block_rfq_trade_scope"):
        need(ctx, "block_rfq", "read")
    else:
        need(ctx, "trade", "read")
    idx = p.get("index_name")
    grp = p.get("mmp_group")
    if idx is not None and idx not in MMP_REQ_INDEXES:
        raise E_params("unknown index_name", "index_name")
    if grp == "" and F("mmp_empty_group_error"):
        raise E_params("mmp_group must not be empty", "mmp_group")
    if grp and idx is None and not F("mmp_group_without_index"):
        raise E_params("mmp_group requires index_name", "mmp_group")
    n = now_ms()
    out = []
    for e in ST.mmp.get(ctx.auth.user, []):
        fu = e["frozen_until"]
        if fu == 0:
            if F("mmp_zero_treated_expired"):
                continue
        elif fu <= n:
            continue
        if e["block_rfq"] != blk:
            continue
        if idx is not None:
            if idx != "all" and e["index_name"] != idx:
                continue
            if (e.get("mmp_group") or "") != (grp or ""):
                continue
        elif grp and e.get("mmp_group") != grp:
            continue
        out.append(dict(e))
    out.sort(key=lambda e: (e["index_name"], e.get("mmp_group", "")))
    return out


@method("private/get_trigger_order_history", {"currency": ("str", False), "instrument_name": ("str", False),
                                              "count": ("int", False), "continuation": ("str", False)},
        private=True)
def m_toh(p, ctx):
    need(ctx, "trade", "read")
    cur = p.get("currency")
    if cur is not None and cur not in TOH_CURRENCIES:
        raise E_params("currency must be one of " + ", ".join(TOH_CURRENCIES), "currency")
    count = p.get("count", 20)
    if not (1 <= count <= 1000) or (count == 1000 and F("toh_count_1000_rejected")):
        raise E_params("count must be from 1 to 1000", "count")
    instr = p.get("instrument_name")
    if instr is not None and instr not in INSTRUMENTS:
        raise E_notfound("unknown instrument_name", "instrument_name")
    lst = [e for e in ST.toh.get(ctx.auth.user, [])
           if (cur is None or e["_cur"] == cur) and (instr is None or e["instrument_name"] == instr)]
    start = 0
    cont = p.get("continuation")
    if cont:
        m = re.fullmatch(r"toh-(\d{1,9})", cont)
        if not m:
            raise E_params("malformed continuation", "continuation")
        seq = int(m.group(1))
        idxs = [i for i, e in enumerate(lst) if e["_seq"] == seq]
        if not idxs:
            raise E_params("continuation does not match this query", "continuation")
        start = idxs[0]
    page = lst[start:start + count]
    nxt = start + count
    if F("toh_continuation_skip"):
        nxt += 1
    cont_out = "toh-%d" % lst[nxt]["_seq"] if nxt < len(lst) else ""
    return {"entries": [{k: v for k, v in e.items() if not k.startswith("_")} for e in page],
            "continuation": cont_out}


def tx_match(e, kw):
    t = e["type"]
    if kw in ("trade", "withdrawal", "delivery", "settlement", "deposit", "transfer", "correction", "swap",
              "expiry"):
        return t == kw
    if kw in ("maker", "taker"):
        return t == "trade" and e["user_role"] == kw
    if kw in ("open", "close"):
        return e["side"].startswith(kw + " ")
    if kw in ("buy", "sell"):
        return e["side"].endswith(" " + kw)
    if kw == "liquidation":
        return bool(e.get("liquidation"))
    if kw == "block_trade":
        return bool(e.get("block_trade"))
    if kw in ("option", "future"):
        i = INSTRUMENTS.get(e["instrument_name"] or "")
        return bool(i) and i["kind"] == kw
    info = e.get("info")
    if isinstance(info, dict):
        return kw.lower() in (str(info.get("addr", "")).lower(), str(info.get("address", "")).lower())
    return False


@method("private/get_transaction_log", {"currency": ("str", False), "start_timestamp": ("int", False),
                                        "end_timestamp": ("int", False), "search": ("str", False),
                                        "count": ("int", False), "subaccount_id": ("int", False),
                                        "continuation": ("int", False)}, private=True)
def m_txlog(p, ctx):
    need(ctx, "account", "read")
    if not (F("txlog_rate_http_only") and ctx.transport == "ws"):
        b = ST.buckets.setdefault(("txlog", ctx.auth.user), Bucket(TXLOG_RATE, TXLOG_BURST))
        if not b.take():
            raise E_rate()
    cur = p.get("currency")
    if cur is not None and cur not in TXLOG_CURRENCIES:
        raise E_params("unsupported currency", "currency")
    count = p.get("count", 100)
    if not (1 <= count <= (251 if F("txlog_count_251") else 250)):
        raise E_params("count must be from 1 to 250", "count")
    start = p.get("start_timestamp", 0)
    end = p.get("end_timestamp", now_ms())
    if start < 0 or end < 0:
        raise E_params("timestamps must not be negative", "start_timestamp" if start < 0 else "end_timestamp")
    if start > end:
        raise E_params("start_timestamp must not exceed end_timestamp", "start_timestamp")
    user = ctx.auth.user
    if "subaccount_id" in p:
        sub = p["subaccount_id"]
        if not ctx.auth.mainaccount:
            raise RpcError(13031, "mainaccount_required", "subaccount_id needs the mainaccount scope", 403)
        if sub not in ST.users or ST.users[sub]["main"] != user:
            raise E_notfound("subaccount_id is not a subaccount of the caller", "subaccount_id")
        if not (F("txlog_sub_page2_main") and "continuation" in p):
            user = sub
    kws = []
    if "search" in p:
        kws = [k for k in re.split(r"[\s,]+", p["search"].strip()) if k]
    cont = p.get("continuation")
    if cont is not None and cont < 1:
        raise E_params("continuation must be a positive integer", "continuation")
    res = []
    nxt = None
    for e in reversed(ST.txlog.get(user, [])):
        if cont is not None and e["id"] > cont:
            continue
        if cur is not None and e["currency"] != cur:
            continue
        if e["timestamp"] < start or e["timestamp"] > end or (F("txlog_end_exclusive") and e["timestamp"] == end):
            continue
        if not all(tx_match(e, k) for k in kws):
            continue
        if len(res) == count:
            nxt = e["id"]
            break
        res.append(e)
    if nxt is None and F("txlog_last_continuation_zero"):
        nxt = 0
    return {"logs": [dict(e) for e in res], "continuation": nxt}


@method("public/get_currencies", {})
def m_currencies(p, ctx):
    out = []
    for i, (code, long, coin, dec, conf, fee, minfee, net) in enumerate(CURRENCY_INFO):
        if F("currencies_coin_type") and code in ("USDC", "USDT"):
            coin = "ERC20"
        e = {"currency": code, "currency_long": long, "coin_type": coin, "decimals": dec,
             "min_confirmations": conf, "withdrawal_fee": num(fee), "min_withdrawal_fee": num(minfee),
             "withdrawal_priorities": [] if code not in ("BTC", "ETH") else
             [{"name": "low", "value": num(1.0)}, {"name": "mid", "value": num(1.5)},
              {"name": "high", "value": num(2.25)}],
             "network_currency": net, "network_fee": num(fee / 4),
             "in_cross_collateral_pool": code in ("BTC", "ETH", "USDC", "USDT", "STETH", "USDE")}
        if code in ("STETH", "USDE"):
            e["apr_7d"] = num(3.12 if code == "STETH" else 7.85)
        if code not in ("EURR", "PAXG"):
            e["internal_id"] = 100 + i
        out.append(e)
    return out


@method("public/get_historical_volatility", {"currency": ("str", False)})
def m_vol(p, ctx):
    cur = p.get("currency", "BTC")
    if cur not in TOH_CURRENCIES:
        raise E_params("currency must be one of " + ", ".join(TOH_CURRENCIES), "currency")
    rnd = random.Random("vol-" + cur)
    base = {"BTC": 48.0, "ETH": 62.0, "USDC": 1.2, "USDT": 1.4, "EURR": 6.5}[cur]
    hour = now_ms() // 3_600_000 * 3_600_000
    pts = []
    v = base
    for k in range(384, 0, -1):
        v = max(0.1, v + rnd.uniform(-1.5, 1.5) * base / 50)
        pts.append([hour - (k - 1) * 3_600_000, num(round(v, 4))])
    if F("vol_last_ts_float"):
        pts[-1][0] = float(pts[-1][0])
    return pts


def member_view(m, full):
    d = {"member_name": m["member_name"], "is_active": m["is_active"]}
    if full:
        d.update(member_id=m["member_id"], owner_user_id=m["owner_user_id"], account_ids=list(m["account_ids"]),
                 modified_at=m["modified_at"])
    return d


@method("private/delete_member", {"member_id": ("int", True)}, private=True)
def m_delete_member(p, ctx):
    need(ctx, "account", "read_write")
    owner = ctx.auth.user
    if F("delete_member_no_mainaccount") and not ctx.auth.mainaccount:
        owner = ST.main_of(owner)
    else:
        need_main(ctx)
    if not ST.users[owner]["da"]:
        raise RpcError(13030, "direct_access_not_enabled", "Direct Access trading is not enabled for this account",
                       403)
    mid = p["member_id"]
    if mid < 1:
        raise E_params("member_id must be >= 1", "member_id")
    lst = ST.members.get(owner, [])
    hit = [m for m in lst if m["member_id"] == mid]
    if not hit:
        raise E_notfound("member not found", "member_id")
    lst.remove(hit[0])
    return {"members": [member_view(m, True) for m in lst], "is_direct_access_allowed": True}


@method("private/get_members", {}, private=True)
def m_get_members(p, ctx):
    need(ctx, "account", "read")
    owner = ST.main_of(ctx.auth.user)
    full = ctx.auth.mainaccount
    return {"members": [member_view(m, full) for m in ST.members.get(owner, [])
                        if full or ctx.auth.user in m["account_ids"]],
            "is_direct_access_allowed": ST.users[owner]["da"]}


@method("private/close_position", {"instrument_name": ("str", True), "type": ("str", True),
                                   "price": ("num", False)}, private=True)
def m_close(p, ctx):
    need(ctx, "trade", "read_write")
    typ = p["type"]
    if typ not in ("limit", "market"):
        raise E_params("type must be limit or market", "type")
    instr = p["instrument_name"]
    meta = INSTRUMENTS.get(instr)
    if not meta or meta["expired"]:
        raise E_notfound("unknown or expired instrument", "instrument_name")
    if "price" in p and (p["price"] <= 0 or p["price"] > 1e12):
        raise E_params("price must be positive", "price")
    if typ == "market" and "price" in p:
        raise E_params("price is only for limit orders", "price")
    user = ctx.auth.user
    if F("da_lock_blocks_rest") and user in ST.locked:
        raise RpcError(13900, "portfolio_locked", "portfolio is locked", 409)
    size = ST.positions.get(user, {}).get(instr, 0)
    if not size:
        raise RpcError(11035, "no_open_position", "no open position in this instrument", 400, "instrument_name")
    direction = "sell" if size > 0 else "buy"
    amount = abs(size)
    mark = meta["mark"]
    n = now_ms()
    if typ == "market":
        px = mark * (0.9995 if direction == "sell" else 1.0005)
        fills = True
    else:
        px = p.get("price", mark)
        fills = (px <= mark * 1.001) if direction == "sell" else (px >= mark * 0.999)
    order = ST.make_order(instr, direction, amount, px, typ, "filled" if fills else "open", amount if fills else 0,
                          px if fills else 0, n)
    order["reduce_only"] = True
    trades = []
    if fills:
        parts = [amount] if amount < 100 or meta["kind"] == "option" else [amount * 0.6, amount * 0.4]
        for part in parts:
            ST.trade_seq[instr] = ST.trade_seq.get(instr, 41000) + 1
            ST.trade_counter += 1
            tid = ST.trade_counter if (F("close_trade_id_int") and typ == "limit") else "%s-%d" % (
                meta["currency"], ST.trade_counter)
            fee = round(part * 0.0000000125 if meta["kind"] != "option" else part * 0.0003, 8)
            trades.append(dict(trade_seq=ST.trade_seq[instr], trade_id=tid, timestamp=n, tick_direction=1 if
                               direction == "buy" else 3, state="filled", reduce_only=True, price=num(px),
                               post_only=False, order_type=typ, order_id=order["order_id"], matching_id=None,
                               mark_price=num(mark), liquidity="T" if typ == "market" else "M",
                               instrument_name=instr, index_price=num(mark * 0.9998), fee_currency=meta["currency"],
                               fee=num(fee), direction=direction, amount=num(part)))
        del ST.positions[user][instr]
        prev = [x for x in ST.txlog.get(user, []) if x["currency"] == meta["currency"]]
        bal = (prev[-1]["balance"] if prev else 0) - 0.0001
        e = ST.log_entry(user, n, meta["currency"], "trade", "close " + direction, instr, amount, 0, px,
                         -0.0001, bal, mark_price=mark, commission=0.0001, trade_id=str(trades[0]["trade_id"]),
                         order_id=order["order_id"], user_role="taker" if typ == "market" else "maker",
                         ip=ctx.ip, info="source: api")
        ST.log_append(user, e)
    else:
        ST.orders[user].append(order)
    return {"trades": trades, "order": order}


@method("private/get_positions", {"currency": ("str", False)}, private=True)
def m_positions(p, ctx):
    need(ctx, "trade", "read")
    out = []
    for instr, size in sorted(ST.positions.get(ctx.auth.user, {}).items()):
        meta = INSTRUMENTS[instr]
        if p.get("currency") and meta["currency"] != p["currency"]:
            continue
        out.append({"instrument_name": instr, "size": num(size), "direction": "buy" if size > 0 else "sell",
                    "mark_price": num(meta["mark"]), "kind": meta["kind"], "currency": meta["currency"]})
    return out


@method("private/get_open_orders", {"instrument_name": ("str", False)}, private=True)
def m_open_orders(p, ctx):
    need(ctx, "trade", "read")
    return [dict(o) for o in ST.orders.get(ctx.auth.user, [])
            if o["order_state"] == "open" and p.get("instrument_name") in (None, o["instrument_name"])]


@method("private/create_api_key", {"max_scope": ("str", True), "name": ("str", False)}, private=True)
def m_create_key(p, ctx):
    need(ctx, "account", "read_write")
    user = ctx.auth.user
    have = [k for k in ST.keys.values() if k["user"] == user]
    limit = MAX_KEYS
    if len(have) >= limit:
        raise RpcError(13700, "api_key_limit_reached", "a user may configure up to %d client ids" % MAX_KEYS, 400)
    sc = parse_scope(p["max_scope"])
    if not sc["fams"]:
        raise E_params("max_scope must name at least one of account/trade/wallet/block_rfq", "max_scope")
    fams = {f: sc["fams"].get(f, "none") for f in FAMILIES}
    for f, lv in fams.items():
        if not ctx.auth.has(f, lv):
            raise E_forbidden("max_scope exceeds the caller's permissions")
    cid = "K" + secrets.token_hex(6)
    secret = "sec-" + secrets.token_hex(12)
    ST.add_key(cid, secret, user, fams, [], p.get("name", ""))
    return {"client_id": cid, "client_secret": secret, "max_scope": " ".join("%s:%s" % (f, fams[f]) for f in FAMILIES),
            "name": p.get("name", ""), "keys_in_use": len(have) + 1}


@method("public/get_book_summary_by_instrument", {"instrument_name": ("str", True)})
def m_book(p, ctx):
    meta = INSTRUMENTS.get(p["instrument_name"])
    if not meta or meta["expired"]:
        raise E_notfound("unknown or expired instrument", "instrument_name")
    rnd = random.Random("book-" + meta["name"])
    m = meta["mark"]
    spread = m * 0.0004
    e = {"instrument_name": meta["name"], "base_currency": meta["base"], "quote_currency": meta["quote"],
         "volume": num(round(rnd.uniform(100, 90000), 4)),
         "underlying_price": num(round(m if meta["kind"] != "option" else
                                       INSTRUMENTS[meta["base"] + "-PERPETUAL"]["mark"], 4)),
         "underlying_index": meta["base"].lower() + "_usd" if meta["quote"] == "USD" else
         meta["base"].lower() + "_" + meta["quote"].lower(),
         "price_change": num(round(rnd.uniform(-6, 6), 4)), "open_interest": num(round(rnd.uniform(1000, 5e6), 2)),
         "mid_price": num(round(m, 8)), "mark_price": num(m), "low": num(round(m * 0.97, 8)),
         "high": num(round(m * 1.025, 8)), "last": num(round(m * 1.0002, 8)), "bid_price": num(round(m - spread, 8)),
         "ask_price": num(round(m + spread, 8)), "interest_rate": 0, "creation_timestamp": now_ms()}
    if F("book_summary_object"):
        return e
    return [e]


# ---------------------------------------------------------------------------
# Dispatch
# ---------------------------------------------------------------------------
def dispatch(method_name, params, ctx, from_query=False):
    m = METHODS.get(method_name)
    if m is None:
        raise RpcError(-32601, "method_not_found", "method not found", 404)
    if m["ws_only"] and ctx.transport != "ws" and not F("logout_over_http"):
        raise RpcError(10041, "websocket_only", "this method is available over WebSocket only", 400)
    params = dict(params)
    if m["private"]:
        ctx.auth = authenticate(ctx, params)
    elif ctx.transport == "ws":
        tok = params.pop("access_token", None)
        if tok is not None and not isinstance(tok, str):
            raise E_params("access_token must be a string", "access_token")
    # general rate limit: authenticated callers get a higher limit
    if ctx.auth is not None:
        b = ST.buckets.setdefault(("acct", ctx.auth.user), Bucket(AUTH_RATE, AUTH_BURST))
    else:
        b = ST.buckets.setdefault(("ip", ctx.ip, id(ctx.conn) if ctx.conn else 0), Bucket(PUB_RATE, PUB_BURST))
    if not b.take():
        raise E_rate()
    p = validate(m["spec"], params, from_query)
    res = m["fn"](p, ctx)
    if ctx.transport == "ws" and ctx.issued is not None and ctx.issued["session"]:
        ctx.conn.remembered = ctx.issued["access"]
    return res


def envelope(rid, result=None, error=None, t_in=None, ws=False):
    env = {}
    if rid is not None:
        env["id"] = rid
    if not (error is not None and ws and F("ws_error_no_jsonrpc")):
        env["jsonrpc"] = "2.0"
    if error is not None:
        env["error"] = error.obj()
    else:
        env["result"] = result
    if t_in is not None:
        env["elapsed_us"] = int((time.perf_counter() - t_in) * 1e6)
    return env


def dumps(o):
    try:
        return json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(o, separators=(",", ":")).encode("ascii")


def parse_json(data):
    try:
        txt = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
        return json.loads(txt, parse_constant=lambda c: (_ for _ in ()).throw(ValueError("constant")))
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise RpcError(-32700, "parse_error", "request is not valid JSON", 400)


def check_envelope(msg):
    if not isinstance(msg, dict):
        raise RpcError(-32600, "invalid_request", "request must be a JSON object (batches are not supported)", 400)
    rid = msg.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int) or abs(rid) >= INT_LIMIT:
        raise RpcError(-32600, "invalid_request", "id must be an integer", 400)
    if msg.get("jsonrpc") != "2.0":
        raise _Rid(RpcError(-32600, "invalid_request", "jsonrpc must be \"2.0\"", 400), rid)
    if not isinstance(msg.get("method"), str):
        raise _Rid(RpcError(-32600, "invalid_request", "method must be a string", 400), rid)
    if "params" not in msg or not isinstance(msg["params"], dict):
        raise _Rid(RpcError(-32600, "invalid_request",
                            "params must be an object (empty object when there are none)", 400), rid)
    extra = set(msg) - {"jsonrpc", "id", "method", "params"}
    if extra:
        raise _Rid(RpcError(-32600, "invalid_request", "unexpected envelope member", 400), rid)
    return rid


class _Rid(Exception):
    def __init__(self, err, rid):
        super().__init__("rid")
        self.err, self.rid = err, rid


def handle_message(msg, ctx):
    """Returns (rid, result, error)."""
    rid = None
    try:
        rid = check_envelope(msg)
        return rid, dispatch(msg["method"], msg["params"], ctx), None
    except _Rid as x:
        return x.rid, None, x.err
    except RpcError as e:
        return rid, None, e
    except Exception as e:  # never crash
        return rid, None, RpcError(-32603, "internal_error", "internal error: %s" % type(e).__name__, 500)


# ---------------------------------------------------------------------------
# HTTP server
# ---------------------------------------------------------------------------
STATUS_TEXT = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
               405: "Method Not Allowed", 409: "Conflict", 411: "Length Required", 413: "Payload Too Large",
               429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
               101: "Switching Protocols"}
MAX_BODY = 1 << 20
HTTP_COUNTER = [0]
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


async def read_head(reader):
    data = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=30)
    if len(data) > 16384:
        raise ValueError("head too large")
    return data


def http_response(status, body, extra_headers=(), keep=True):
    h = ["HTTP/1.1 %d %s" % (status, STATUS_TEXT.get(status, "Status")),
         "Content-Type: application/json; charset=utf-8", "Content-Length: %d" % len(body),
         "Connection: %s" % ("keep-alive" if keep else "close")]
    h.extend(extra_headers)
    return ("\r\n".join(h) + "\r\n\r\n").encode() + body


async def read_body(reader, headers):
    if "chunked" in headers.get("transfer-encoding", "").lower():
        out = b""
        while True:
            line = await asyncio.wait_for(reader.readuntil(b"\r\n"), 30)
            size = int(line.strip().split(b";")[0], 16)
            if size == 0:
                await asyncio.wait_for(reader.readuntil(b"\r\n"), 30)
                return out
            out += await asyncio.wait_for(reader.readexactly(size + 2), 30)
            out = out[:-2]
            if len(out) > MAX_BODY:
                raise OverflowError
    cl = headers.get("content-length")
    if cl is None:
        return b""
    if not cl.strip().isdigit():
        raise ValueError("bad content-length")
    n = int(cl.strip())
    if n > MAX_BODY:
        raise OverflowError
    return await asyncio.wait_for(reader.readexactly(n), 30)


def parse_head(data):
    text = data.decode("latin-1")
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise ValueError("bad request line")
    headers = {}
    for ln in lines[1:]:
        if not ln:
            continue
        k, sep, v = ln.partition(":")
        if not sep:
            raise ValueError("bad header")
        headers[k.strip().lower()] = v.strip()
    return parts[0], parts[1], parts[2], headers


async def handle_conn(reader, writer, da=False):
    peer = writer.get_extra_info("peername") or ("127.0.0.1", 0)
    ip = peer[0]
    try:
        while True:
            try:
                head = await read_head(reader)
            except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError):
                return
            except (asyncio.LimitOverrunError, ValueError):
                writer.write(http_response(431, dumps(envelope(None, error=RpcError(
                    -32600, "invalid_request", "request head too large", 431))), keep=False))
                await writer.drain()
                return
            try:
                verb, target, _ver, headers = parse_head(head)
            except ValueError:
                writer.write(http_response(400, dumps(envelope(None, error=RpcError(
                    -32600, "invalid_request", "malformed HTTP request", 400))), keep=False))
                await writer.drain()
                return
            try:
                body = await read_body(reader, headers)
            except OverflowError:
                writer.write(http_response(413, dumps(envelope(None, error=RpcError(
                    -32600, "invalid_request", "body too large", 413))), keep=False))
                await writer.drain()
                return
            except (ValueError, asyncio.LimitOverrunError):
                writer.write(http_response(400, dumps(envelope(None, error=RpcError(
                    -32600, "invalid_request", "malformed body framing", 400))), keep=False))
                await writer.drain()
                return
            except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError):
                return
            keep = headers.get("connection", "").lower() != "close"
            path = target.split("?", 1)[0]
            if not da and path == "/ws/api/v2" and "websocket" in headers.get("upgrade", "").lower():
                await ws_session(reader, writer, headers, ip)
                return
            if da:
                status, payload = handle_da(verb, target, headers)
            else:
                status, payload = handle_http(verb, target, headers, body, ip)
            extra = ["Retry-After: 1"] if status == 429 else []
            writer.write(http_response(status, payload, extra, keep))
            await writer.drain()
            if not keep:
                return
    except Exception:
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


def handle_http(verb, target, headers, body, ip):
    t_in = time.perf_counter()
    HTTP_COUNTER[0] += 1
    rid = HTTP_COUNTER[0]
    body_form = False
    try:
        if verb != "GET":
            raise RpcError(-32600, "method_not_allowed", "only GET is supported", 405)
        path, _, query = target.partition("?")
        if not path.startswith("/api/v2/"):
            raise RpcError(-32601, "not_found", "unknown path", 404)
        try:
            method_name = urllib.parse.unquote(path[len("/api/v2/"):], errors="strict")
        except UnicodeDecodeError:
            raise RpcError(-32601, "method_not_found", "method not found", 404)
        ctx = Ctx("http", ip, headers=headers, raw_uri=target, body=body, http_method=verb)
        use_body = bool(body.strip())
        if use_body and F("http_body_needs_content_type") and \
                "application/json" not in headers.get("content-type", ""):
            use_body = False
        if use_body:
            body_form = True
            msg = parse_json(body)
            if query:
                raise RpcError(-32600, "invalid_request", "send parameters either in the query or in the body", 400)
            try:
                rid = check_envelope(msg)
            except _Rid as x:
                rid = x.rid
                raise x.err
            if msg["method"] != method_name:
                raise RpcError(-32600, "invalid_request", "body method differs from the URL path", 400)
            res = dispatch(method_name, msg["params"], ctx)
        else:
            try:
                pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=False,
                                               errors="strict", max_num_fields=200)
            except (UnicodeDecodeError, ValueError):
                raise E_params("malformed query string")
            params = {}
            for k, v in pairs:
                if k in params:
                    raise E_params("duplicate parameter '%s'" % k[:64], k[:64])
                params[k] = v
            res = dispatch(method_name, params, ctx, from_query=True)
        out_id = str(rid) if (body_form and F("envelope_id_string")) else rid
        return 200, dumps(envelope(out_id, result=res, t_in=t_in))
    except RpcError as e:
        return e.status, dumps(envelope(rid, error=e, t_in=t_in))
    except Exception as e:
        err = RpcError(-32603, "internal_error", "internal error: %s" % type(e).__name__, 500)
        return 500, dumps(envelope(rid, error=err, t_in=t_in))


def handle_da(verb, target, headers):
    try:
        if verb != "GET":
            raise RpcError(-32600, "method_not_allowed", "only GET is supported", 405)
        path, _, query = target.partition("?")
        h = headers.get("authorization", "")
        scheme, _, key = h.partition(" ")
        if scheme.lower() != "bearer" or key.strip() not in ST.da_keys:
            raise RpcError(13009, "unauthorized", "missing or unknown Direct Access API key", 401)
        portfolio = ST.da_keys[key.strip()]
        if F("da_lock_other_portfolio"):
            portfolio = MAIN
        try:
            q = dict(urllib.parse.parse_qsl(query, keep_blank_values=True, errors="strict"))
        except (UnicodeDecodeError, ValueError):
            raise E_params("malformed query string")
        if path == "/api/v2/private/lock_portfolio":
            if q:
                raise E_params("lock_portfolio takes no parameters")
            for o in ST.orders[portfolio]:
                if o.get("via_direct_access") and o["order_state"] == "open":
                    o["order_state"] = "cancelled"
                    o["last_update_timestamp"] = now_ms()
            ST.orders[portfolio] = [o for o in ST.orders[portfolio] if o["order_state"] == "open"]
            ST.locked.add(portfolio)
            return 200, dumps({"jsonrpc": "2.0", "result": "ok"})
        if path == "/api/v2/private/get_open_orders":
            return 200, dumps({"jsonrpc": "2.0", "result": [o for o in ST.orders[portfolio]
                                                            if o.get("via_direct_access")]})
        if path in ("/api/v2/private/submit_order", "/api/v2/private/submit_quote"):
            if portfolio in ST.locked:
                raise RpcError(13900, "portfolio_locked", "portfolio is locked; new Direct Access orders and quotes "
                               "are rejected", 409)
            spec = {"instrument_name": ("str", True), "direction": ("str", True), "amount": ("num", True),
                    "price": ("num", True)}
            pp = validate(spec, q, True)
            if pp["instrument_name"] not in INSTRUMENTS or pp["direction"] not in ("buy", "sell") or \
                    pp["amount"] <= 0 or pp["price"] <= 0:
                raise E_params("invalid order")
            o = ST.make_order(pp["instrument_name"], pp["direction"], pp["amount"], pp["price"], "limit", "open", 0,
                              0.0, now_ms(), da=True)
            ST.orders[portfolio].append(o)
            return 200, dumps({"jsonrpc": "2.0", "result": o})
        raise RpcError(-32601, "method_not_found", "unknown Direct Access path", 404)
    except RpcError as e:
        return e.status, dumps({"jsonrpc": "2.0", "error": e.obj()})
    except Exception as e:
        return 500, dumps({"jsonrpc": "2.0", "error": {"code": -32603, "message": "internal_error",
                                                       "data": {"reason": type(e).__name__}}})


# ---------------------------------------------------------------------------
# WebSocket
# ---------------------------------------------------------------------------
class WsConn:
    def __init__(self):
        self.remembered = None
        self.close_after = False


def ws_frame(opcode, payload=b""):
    n = len(payload)
    if n < 126:
        h = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 65536:
        h = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        h = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return h + payload


async def ws_session(reader, writer, headers, ip):
    key = headers.get("sec-websocket-key", "")
    if headers.get("sec-websocket-version") != "13" or not key:
        writer.write(http_response(400, dumps(envelope(None, error=RpcError(
            -32600, "invalid_request", "bad WebSocket handshake", 400))), keep=False))
        await writer.drain()
        return
    acc = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
    writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Accept: %s\r\n\r\n" % acc).encode())
    await writer.drain()
    conn = WsConn()
    frag_op, frag = None, bytearray()

    async def close(code, reason=""):
        try:
            writer.write(ws_frame(0x8, struct.pack("!H", code) + reason.encode()[:100]))
            await writer.drain()
        except Exception:
            pass

    while True:
        try:
            h = await asyncio.wait_for(reader.readexactly(2), timeout=600)
            b1, b2 = h[0], h[1]
            fin, rsv, op = b1 & 0x80, b1 & 0x70, b1 & 0x0F
            masked, n = b2 & 0x80, b2 & 0x7F
            if n == 126:
                n = struct.unpack("!H", await asyncio.wait_for(reader.readexactly(2), 30))[0]
            elif n == 127:
                n = struct.unpack("!Q", await asyncio.wait_for(reader.readexactly(8), 30))[0]
            if rsv or not masked:
                await close(1002, "protocol error")
                return
            if op >= 8 and (n > 125 or not fin):
                await close(1002, "bad control frame")
                return
            if n > MAX_BODY or len(frag) + n > MAX_BODY:
                await close(1009, "message too big")
                return
            mask = await asyncio.wait_for(reader.readexactly(4), 30)
            raw = await asyncio.wait_for(reader.readexactly(n), 60)
            if n:
                mk = (mask * (n // 4 + 1))[:n]
                data = bytearray((int.from_bytes(raw, "big") ^ int.from_bytes(mk, "big")).to_bytes(n, "big"))
            else:
                data = bytearray()
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError):
            return
        if op == 0x8:
            code = struct.unpack("!H", bytes(data[:2]))[0] if len(data) >= 2 else 1000
            await close(1000 if code in (1005, 1006) else code if 1000 <= code < 5000 else 1002)
            return
        if op == 0x9:
            writer.write(ws_frame(0xA, bytes(data)))
            await writer.drain()
            continue
        if op == 0xA:
            continue
        if op in (0x1, 0x2):
            if frag_op is not None:
                await close(1002, "expected continuation")
                return
            if not fin:
                frag_op, frag = op, bytearray(data)
                continue
            msg_op, payload = op, bytes(data)
        elif op == 0x0:
            if frag_op is None:
                await close(1002, "unexpected continuation")
                return
            frag += data
            if not fin:
                continue
            msg_op, payload = frag_op, bytes(frag)
            frag_op, frag = None, bytearray()
        else:
            await close(1002, "unknown opcode")
            return
        if msg_op == 0x2:
            await close(1003, "binary messages are not accepted")
            return
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            await close(1007, "invalid UTF-8")
            return
        t_in = time.perf_counter()
        ctx = Ctx("ws", ip, conn=conn)
        try:
            msg = parse_json(text)
            rid, res, err = handle_message(msg, ctx)
        except RpcError as e:
            rid, res, err = None, None, e
        if err is not None and F("ws_remember_lost_on_error"):
            conn.remembered = None
        out = envelope(rid, result=res, error=err, t_in=t_in, ws=True)
        try:
            writer.write(ws_frame(0x1, dumps(out)))
            await writer.drain()
        except Exception:
            return
        if conn.close_after:
            await close(1000, "logged out")
            return


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------
async def amain(port, da_port):
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, stop.set)
    srv = await asyncio.start_server(lambda r, w: handle_conn(r, w, False), "127.0.0.1", port, limit=65536)
    dsrv = await asyncio.start_server(lambda r, w: handle_conn(r, w, True), "127.0.0.1", da_port, limit=65536)
    sys.stdout.write("listening http://127.0.0.1:%d/api/v2 ws://127.0.0.1:%d/ws/api/v2 direct-access "
                     "http://127.0.0.1:%d\n" % (port, port, da_port))
    sys.stdout.flush()
    await stop.wait()
    srv.close()
    dsrv.close()


def main(argv):
    global ST
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8813)
    ap.add_argument("--direct-access-port", type=int, default=None)
    ap.add_argument("--faults", default="")
    ap.add_argument("--list-faults", action="store_true")
    a = ap.parse_args(argv)
    if a.list_faults:
        for name, (rule, sec, _near) in FAULTS.items():
            print("%s\t%s (SPEC.md section %s)" % (name, rule, sec))
        return 0
    for f in [x.strip() for x in a.faults.split(",") if x.strip()]:
        if f not in FAULTS:
            print("unknown fault: %s" % f, file=sys.stderr)
            return 2
        ACTIVE.add(f)
    ST = State()
    try:
        asyncio.run(amain(a.port, a.direct_access_port or a.port + 1))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
