#!/usr/bin/env python3
"""Independent implementation of the JSON-RPC trading API, interface 2.1.1.

Written from SPEC.md alone.  Standard library only (Python 3.11).

    python3 server.py --port 8812 [--faults a,b] [--list-faults] [--verbose]

Transports (all on 127.0.0.1:PORT):
    HTTP GET   /api/v2/<public|private>/<name>           JSON-RPC over HTTP
    WebSocket  /ws/api/v2                                 JSON-RPC over WebSocket
    HTTP GET   /direct-access/api/v2/private/lock_portfolio  Direct Access REST
See README.md for accounts, choices and seeded faults.
"""
import argparse
import asyncio
import base64
import hashlib
import hmac
import ipaddress
import json
import math
import random
import re
import secrets
import signal
import struct
import sys
import time
import urllib.parse
from collections import OrderedDict

# ---------------------------------------------------------------- constants
INTERFACE_VERSION = "2.1.1"
API_PREFIX = "/api/v2/"
WS_PATH = "/ws/api/v2"
DA_PREFIX = "/direct-access"
DA_LOCK_PATH = DA_PREFIX + "/api/v2/private/lock_portfolio"
SIG_SCHEME = "ix-hmac-sha256"
TFA_PARAM = "tfa_code"
TXLOG_FILTER_PARAM = "filter"
FORK_REFRESH_PARAM = "refresh_token"
FORK_NAME_PARAM = "name"

MAX_HEADER = 16 * 1024
MAX_BODY = 64 * 1024
MAX_WS_MSG = 64 * 1024
MAX_STR = 4096
HEADER_TIMEOUT = 30.0

DEFAULT_TTL = 900            # seconds, access token lifetime without expires:N
MAX_EXPIRES = 2592000        # largest expires:N accepted (30 days)
REFRESH_TTL = 86400          # seconds, refresh token lifetime
SIG_WINDOW_MS = 60000        # 5.5 / 5.6
SIG_FUTURE_MS = 1000         # timestamps more than 1 s in the future are rejected
SESSIONS_PER_KEY = 16        # session slots per (client id, user); LRU eviction
TXLOG_RATE = 1.0             # tokens per second (section 8)
TXLOG_BURST = 3              # bucket size
TOTP_STEP = 30

# ---------------------------------------------------------------- faults
# name -> (rule broken, SPEC.md section, nearest miss?)
FAULTS = OrderedDict([
    ("ws_error_no_jsonrpc", ("every response carries jsonrpc \"2.0\"; broken only for error responses on WebSocket", "1, 9", True)),
    ("id_int32_wrap", ("response id echoes the request id; broken only for ids >= 2^31 (wrapped to 32 bits)", "1", True)),
    ("body_get_status_202", ("a successful call answers HTTP 200; broken only for GET with a JSON-RPC body (202)", "7", True)),
    ("get_body_params_ignored", ("parameters may be sent as a JSON-RPC body with the GET; body params ignored", "1", False)),
    ("ws_session_not_remembered", ("a WebSocket authenticated with a session token remembers it", "5.2", False)),
    ("basic_rejected", ("HTTP Basic authentication works for any private method", "5.6", False)),
    ("sig_header_path_only", ("signed header: request URI includes the query string; broken only when a query is present", "5.6", True)),
    ("sig_header_nonce_reusable", ("signed header nonce is single use; broken only for the signed header (client_signature still enforced)", "5.6", True)),
    ("client_sig_window_61s", ("client_signature timestamp valid for 60 s; accepts up to 61 s", "5.5, 8", True)),
    ("client_sig_no_trailing_lf", ("string to sign still ends with LF when data is omitted; broken only without data", "5.5", True)),
    ("client_sig_nonce_reusable", ("client_signature nonce is single use", "5.5", False)),
    ("client_sig_data_not_returned", ("client_signature data is returned in the response", "4.1", False)),
    ("toh_scope_unchecked", ("get_trigger_order_history needs trade:read", "4.7", False)),
    ("mmp_block_rfq_scope_trade", ("get_mmp_status with block_rfq=true needs block_rfq:read; checks trade:read instead (only with the parameter)", "4.6", True)),
    ("toggle_scope_read_only", ("toggle_subaccount_login needs account:read_write; account:read accepted", "4.5", True)),
    ("delete_member_no_mainaccount", ("delete_member needs mainaccount scope", "4.11", False)),
    ("expiry_not_enforced", ("tokens last expires_in seconds; accepted until twice that (only after the lifetime passes)", "5.4, 2.1", True)),
    ("token_type_capitalized", ("token_type is always \"bearer\"; \"Bearer\" only for the refresh_token grant", "2.1", True)),
    ("scope_comma_separated", ("granted scope is space separated; commas only when expires:N is granted", "2.1", True)),
    ("enabled_features_unknown", ("enabled_features holds only the listed entries; wrong entry only for the subaccount key", "2.1", True)),
    ("refresh_keeps_old_token", ("connection-scoped refresh invalidates the previous token", "5.3", False)),
    ("refresh_same_refresh_token", ("refresh returns a new refresh token", "5.3", False)),
    ("refresh_drops_session", ("session-scoped refresh keeps the session; broken only on refresh (session scope lost)", "5.3", True)),
    ("logout_over_http", ("private/logout is WebSocket only", "4.4", False)),
    ("logout_keeps_refresh", ("logout invalidates the tokens; refresh token survives", "4.4", True)),
    ("fork_connection_token", ("connection-only tokens cannot be forked", "4.3", False)),
    ("fork_kills_parent", ("both sessions run concurrently after fork; parent access token revoked", "4.3", True)),
    ("exchange_scope_exceeds", ("exchange_token scope must not exceed the caller's permissions", "4.2", False)),
    ("exchange_override_wrong_subject", ("exchange_token issues a token for subject_id; wrong only when a scope override is given", "4.2", True)),
    ("tfa_not_required", ("toggle_subaccount_login needs the second factor on 2FA accounts", "4.5, 5.7", False)),
    ("tfa_wrong_error_name", ("error 13668 is named security_key_authorization_error; right code, wrong name", "7", True)),
    ("tfa_enable_unchecked", ("second factor required for toggle_subaccount_login; only enforced for state=disable", "4.5, 5.7", True)),
    ("toggle_disable_keeps_sessions", ("disabling a subaccount login ends its active sessions at once", "4.5, 3", False)),
    ("toggle_result_true", ("toggle_subaccount_login result is the string ok", "4.5", False)),
    ("mmp_group_without_index", ("mmp_group requires index_name", "4.6", False)),
    ("mmp_empty_group_error", ("empty mmp_group targets the default group, not an error", "4.6", True)),
    ("mmp_hides_frozen_zero", ("all triggered statuses returned, including frozen_until 0", "4.6, 2.4, 3", False)),
    ("toh_count_1000_rejected", ("trigger order history count 1 to 1000; 1000 rejected", "4.7, 8", True)),
    ("toh_default_count_10", ("trigger order history count default 20", "4.7, 8", False)),
    ("toh_trigger_index_page2", ("trigger is index_price/mark_price/last_price; \"index\" on pages after the first", "2.2", True)),
    ("txlog_count_250_rejected", ("transaction log count 1 to 250; 250 rejected", "4.8, 8", True)),
    ("txlog_full_last_page_continuation", ("continuation is null when there is no further page; non-null when the last page is exactly full", "4.8", True)),
    ("txlog_end_exclusive", ("end_timestamp is the latest timestamp (inclusive); entries exactly at it dropped", "4.8", True)),
    ("txlog_subaccount_ignored", ("subaccount_id returns that subaccount's transactions; ignored", "4.8", True)),
    ("txlog_expiry_extra_entry", ("an OTM option expiry yields one expiry entry and nothing else; extra entry for the ETH option only", "4.8", True)),
    ("txlog_two_year_cutoff", ("no time limit on how far back the log reads; older than 2 years dropped", "4.8", False)),
    ("txlog_no_rate_limit", ("get_transaction_log sustained rate 1 request per second; not limited", "8", False)),
    ("txlog_filter_ignored", ("filter keywords restrict the log; ignored", "4.8", False)),
    ("txlog_transfer_side_empty", ("side is \"-\" on entries without side; \"\" on transfers only", "2.3", True)),
    ("txlog_continuation_string_ws", ("continuation is an integer; string only on WebSocket", "4.8", True)),
    ("currency_coin_type_erc20", ("coin_type is BITCOIN or ETHER; USDT entry says ERC20", "2.5", True)),
    ("vol_eth_seconds", ("volatility timestamps are ms; ETH points in seconds", "2.9, 1", True)),
    ("delete_member_no_da_check", ("delete_member requires Direct Access to be enabled", "4.11", False)),
    ("delete_member_keeps_deleted", ("delete_member returns the members remaining; deleted one still listed", "4.11", False)),
    ("close_label_null", ("order label is a string, empty when unset; null", "2.7", True)),
    ("close_limit_price_ignored", ("close_position price is the limit order price; ignored when given", "4.12", True)),
    ("da_accepts_access_token", ("Direct Access bearer value is an API key of that interface; OAuth token accepted", "5.8, 4.13", False)),
    ("da_lock_blocks_rest", ("orders submitted through REST are unaffected by the lock; close_position rejected after lock", "4.13, 3", True)),
    ("book_summary_object", ("get_book_summary_by_instrument result is an array; a bare object", "4.14", False)),
])

ACTIVE = set()


def F(name):
    return name in ACTIVE


# ---------------------------------------------------------------- errors
# name -> (code, HTTP status)
ERRORS = {
    "parse_error": (-32700, 400),
    "invalid_request": (-32600, 400),
    "method_not_found": (-32601, 404),
    "invalid_params": (-32602, 400),
    "request_too_large": (-32001, 413),
    "not_authenticated": (13001, 401),
    "invalid_credentials": (13002, 401),
    "token_expired": (13003, 401),
    "token_invalid": (13004, 401),
    "scope_insufficient": (13005, 403),
    "invalid_signature": (13006, 401),
    "stale_timestamp": (13007, 401),
    "nonce_reused": (13008, 401),
    "ip_not_allowed": (13009, 403),
    "invalid_scope": (13010, 400),
    "fork_not_allowed": (13011, 400),
    "session_name_in_use": (13012, 400),
    "subject_not_allowed": (13013, 403),
    "scope_exceeds_permissions": (13014, 403),
    "websocket_only": (13015, 400),
    "subaccount_not_found": (13016, 400),
    "da_key_invalid": (13020, 401),
    "security_key_authorization_error": (13668, 403),
    "security_key_invalid": (13669, 403),
    "too_many_requests": (10429, 429),
    "direct_access_not_enabled": (11030, 403),
    "member_not_found": (11031, 400),
    "no_open_position": (11040, 400),
    "unknown_instrument": (11041, 400),
    "invalid_continuation": (11050, 400),
    "portfolio_locked": (11060, 400),
}


class RpcError(Exception):
    def __init__(self, name, reason=None, param=None, http=None, extra=None):
        super().__init__(name)
        self.name = name
        self.code, self.http = ERRORS[name]
        if http:
            self.http = http
        self.reason = reason
        self.param = param
        self.extra = extra

    def obj(self):
        msg = self.name
        if self.name == "security_key_authorization_error" and F("tfa_wrong_error_name"):
            msg = "security_key_required"
        e = {"code": self.code, "message": msg}
        data = {}
        if self.reason:
            data["reason"] = self.reason
        if self.param:
            data["param"] = self.param
        if self.extra:
            data.update(self.extra)
        if data:
            e["data"] = data
        return e


def now_ms():
    return int(time.time() * 1000)


# ---------------------------------------------------------------- accounts
TFA_SECRET = "IXTFAXSECRETKEYQ"   # base32, RFC 6238 TOTP, SHA-1, 30 s, 6 digits

USERS = {
    70001: dict(username="indep_main", main=None, tfa=None, da=True),
    70002: dict(username="alpha_desk", main=70001, tfa=None, da=True),
    70003: dict(username="beta_desk", main=70001, tfa=None, da=False),
    70010: dict(username="indep_tfa", main=None, tfa=TFA_SECRET, da=False),
    70011: dict(username="tfa_child", main=70010, tfa=None, da=False),
}
RW = {"account": "read_write", "block_rfq": "read_write", "trade": "read_write", "wallet": "read_write"}
KEYS = {
    "ix_main_rw": dict(secret="s3cr3t-main-rw-5d1f0b", user=70001, max=dict(RW), features=[]),
    "ix_main_ro": dict(secret="s3cr3t-main-ro-93ac27", user=70001,
                       max={"account": "read", "block_rfq": "read", "trade": "read", "wallet": "none"},
                       features=["restricted_block_trades"]),
    "ix_sub_rw": dict(secret="s3cr3t-sub-rw-4e8812", user=70002, max=dict(RW), features=["block_trade_approval"]),
    "ix_tfa_rw": dict(secret="s3cr3t-tfa-rw-a71c55", user=70010, max=dict(RW), features=[]),
    "ix_tfa_sub": dict(secret="s3cr3t-tfa-sub-0c3d9e", user=70011, max=dict(RW), features=[]),
}
DA_KEYS = {"dak_main_3f9b6c2e8a1d": 70001, "dak_sub_77e0c4a9b215": 70002}


def main_of(uid):
    u = USERS.get(uid)
    if u is None:
        return None
    return u["main"] or uid


def is_main(uid):
    return uid in USERS and USERS[uid]["main"] is None


def hotp(secret_b32, counter, digits=6):
    key = base64.b32decode(secret_b32)
    h = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    o = h[-1] & 0x0F
    code = (struct.unpack(">I", h[o:o + 4])[0] & 0x7FFFFFFF) % (10 ** digits)
    return f"{code:0{digits}d}"


def totp(secret_b32=TFA_SECRET, t=None):
    t = time.time() if t is None else t
    return hotp(secret_b32, int(t // TOTP_STEP))


# ---------------------------------------------------------------- market data
# name -> kind, base, quote, settlement currency, mark, index name, unit
INSTRUMENTS = {
    "BTC-PERPETUAL": dict(kind="future", base="BTC", quote="USD", cur="BTC", mark=94250.5, index="btc_usd", unit=10),
    "ETH-PERPETUAL": dict(kind="future", base="ETH", quote="USD", cur="ETH", mark=1805.25, index="eth_usd", unit=1),
    "BTC-27JUN25": dict(kind="future", base="BTC", quote="USD", cur="BTC", mark=95310.0, index="btc_usd", unit=10),
    "ETH-27JUN25": dict(kind="future", base="ETH", quote="USD", cur="ETH", mark=1821.5, index="eth_usd", unit=1),
    "BTC-27JUN25-100000-C": dict(kind="option", base="BTC", quote="BTC", cur="BTC", mark=0.0415, index="btc_usd", unit=0.1),
    "BTC-27JUN25-80000-P": dict(kind="option", base="BTC", quote="BTC", cur="BTC", mark=0.0222, index="btc_usd", unit=0.1),
    "ETH-27JUN25-3000-P": dict(kind="option", base="ETH", quote="ETH", cur="ETH", mark=0.6601, index="eth_usd", unit=1),
    "ETH-27JUN25-4000-C": dict(kind="option", base="ETH", quote="ETH", cur="ETH", mark=0.0012, index="eth_usd", unit=1),
    "BTC_USDC-PERPETUAL": dict(kind="future", base="BTC", quote="USDC", cur="USDC", mark=94248.0, index="btc_usdc", unit=0.001),
    "ETH_USDC-PERPETUAL": dict(kind="future", base="ETH", quote="USDC", cur="USDC", mark=1804.9, index="eth_usdc", unit=0.01),
}
INDEX_PRICE = {"btc_usd": 94230.12, "eth_usd": 1803.77, "btc_usdc": 94231.0, "eth_usdc": 1803.9}
CUR_INSTR = {
    "BTC": (["BTC-PERPETUAL", "BTC-27JUN25"], ["BTC-27JUN25-100000-C", "BTC-27JUN25-80000-P"]),
    "ETH": (["ETH-PERPETUAL", "ETH-27JUN25"], ["ETH-27JUN25-3000-P", "ETH-27JUN25-4000-C"]),
    "USDC": (["BTC_USDC-PERPETUAL", "ETH_USDC-PERPETUAL"], []),
    "USDT": ([], []),
    "EURR": ([], []),
}
OTM_EXPIRED = {"BTC": "BTC-28MAR25-120000-C", "ETH": "ETH-28MAR25-5000-C"}
OTM_EXPIRY_TS = 1743148800000
ITM_EXPIRED = "BTC-27DEC24-60000-C"
ITM_EXPIRY_TS = 1735286400000

TXLOG_CURRENCIES = ["BTC", "ETH", "STETH", "ETHW", "USDC", "USDT", "EURR", "SOL", "XRP", "USYC", "PAXG", "BNB", "USDE"]
TOH_CURRENCIES = ["BTC", "ETH", "USDC", "USDT", "EURR"]
VOL_CURRENCIES = ["BTC", "ETH", "USDC", "USDT", "EURR"]
TX_KEYWORDS = {"trade", "maker", "taker", "open", "close", "liquidation", "buy", "sell", "withdrawal", "delivery",
               "settlement", "deposit", "transfer", "option", "future", "correction", "block_trade", "swap", "expiry"}
MMP_INDEX_REQ = ["btc_usd", "eth_usd", "btc_usdc", "eth_usdc", "ada_usdc", "algo_usdc", "avax_usdc", "bch_usdc",
                 "bnb_usdc", "doge_usdc", "dot_usdc", "hype_usdc", "link_usdc", "ltc_usdc", "near_usdc", "paxg_usdc",
                 "shib_usdc", "sol_usdc", "ton_usdc", "trx_usdc", "trump_usdc", "uni_usdc", "xrp_usdc", "usde_usdc",
                 "buidl_usdc", "btcdvol_usdc", "ethdvol_usdc", "btc_usdt", "eth_usdt", "all"]
DATA_END = 1746057600000      # 2025-05-01T00:00Z
DATA_START = 1551398400000    # 2019-03-01T00:00Z

CURRENCIES = [
    dict(currency="BTC", currency_long="Bitcoin", coin_type="BITCOIN", decimals=8, min_confirmations=1,
         withdrawal_fee=0.0001, min_withdrawal_fee=0.0001,
         withdrawal_priorities=[{"name": "very_low", "value": 0.15}, {"name": "low", "value": 1.5},
                                {"name": "mid", "value": 1.8}, {"name": "high", "value": 2.0},
                                {"name": "very_high", "value": 3.0}],
         network_currency="BTC", network_fee=0.000015, in_cross_collateral_pool=True, internal_id=1),
    dict(currency="ETH", currency_long="Ethereum", coin_type="ETHER", decimals=8, min_confirmations=12,
         withdrawal_fee=0.0006, min_withdrawal_fee=0.0001, withdrawal_priorities=[],
         network_currency="ETH", network_fee=0.00011, in_cross_collateral_pool=True, internal_id=2),
    dict(currency="STETH", currency_long="Lido Staked ETH", coin_type="ETHER", decimals=8, min_confirmations=12,
         withdrawal_fee=0.001, min_withdrawal_fee=0.001, withdrawal_priorities=[],
         network_currency="ETH", network_fee=0.00011, in_cross_collateral_pool=True, apr_7d=2.91, internal_id=9),
    dict(currency="USDC", currency_long="USD Coin", coin_type="ETHER", decimals=6, min_confirmations=12,
         withdrawal_fee=1.0, min_withdrawal_fee=1.0, withdrawal_priorities=[],
         network_currency="ETH", network_fee=1.3, in_cross_collateral_pool=True, internal_id=3),
    dict(currency="USDT", currency_long="Tether USD", coin_type="ETHER", decimals=6, min_confirmations=12,
         withdrawal_fee=2.5, min_withdrawal_fee=1.0, withdrawal_priorities=[],
         network_currency="ETH", network_fee=2.2, in_cross_collateral_pool=False),
    dict(currency="EURR", currency_long="StablR Euro", coin_type="ETHER", decimals=6, min_confirmations=12,
         withdrawal_fee=3, min_withdrawal_fee=1, withdrawal_priorities=[{"name": "mid", "value": 1}],
         network_currency="ETH", network_fee=1.9, in_cross_collateral_pool=False, internal_id=14),
    dict(currency="USYC", currency_long="US Yield Coin", coin_type="ETHER", decimals=6, min_confirmations=12,
         withdrawal_fee=5.0, min_withdrawal_fee=5.0, withdrawal_priorities=[],
         network_currency="ETH", network_fee=2.0, in_cross_collateral_pool=True, apr_7d=4.27),
]


def book_summary(name):
    i = INSTRUMENTS[name]
    mark = i["mark"]
    und = INDEX_PRICE[i["index"]] * (1.0011 if "27JUN25" in name else 1.0)
    spread = max(mark * 0.0004, 0.0001 if i["kind"] == "option" else 0.5)
    bid = round(mark - spread / 2, 4)
    ask = round(mark + spread / 2, 4)
    h = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
    return {
        "instrument_name": name,
        "base_currency": i["base"],
        "quote_currency": i["quote"],
        "volume": round(100 + h % 50000 / 7.0, 4),
        "underlying_price": round(und, 4),
        "underlying_index": i["index"] if i["kind"] == "future" and "PERPETUAL" in name else (name.split("-")[0] + "-" + name.split("-")[1] if i["kind"] == "option" else "index_price"),
        "price_change": round(((h % 2000) - 1000) / 100.0, 4),
        "open_interest": round(1000 + h % 900000 / 3.0, 4),
        "mid_price": round((bid + ask) / 2, 4),
        "mark_price": mark,
        "low": round(mark * 0.97, 4),
        "high": round(mark * 1.02, 4),
        "last": round(mark * 1.0001, 4),
        "bid_price": bid,
        "ask_price": ask,
        "interest_rate": 0.0,
        "creation_timestamp": DATA_END + 3600_000,
    }


# ---------------------------------------------------------------- deterministic data
def _addr(rng, cur):
    if cur == "BTC":
        return "bc1q" + "".join(rng.choice("023456789acdefghjklmnpqrstuvwxyz") for _ in range(38))
    return "0x" + "".join(rng.choice("0123456789abcdef") for _ in range(40))


def _price_at(inst, ts):
    i = INSTRUMENTS.get(inst)
    base = i["mark"] if i else 1.0
    if i and i["kind"] == "option":
        return round(max(0.0005, base * (0.5 + abs(math.sin(ts / 8.64e8)))), 4)
    f = 0.35 + 0.65 * (ts - DATA_START) / (DATA_END - DATA_START) + 0.08 * math.sin(ts / 3.1e9)
    return round(base * f, 2)


def _gen_events(rng, uid, cur, n, scenario):
    """Events for one user and currency, without balances/ids."""
    user = USERS[uid]
    futs, opts = CUR_INSTR.get(cur, ([], []))
    pos = {}
    ev = []
    t0 = DATA_START + rng.randint(0, 40) * 86400000
    ts_list = sorted(set(rng.randint(t0 + 86400000, DATA_END - 86400000) for _ in range(n - 1)))
    deposit_amt = {"BTC": 25.0, "ETH": 400.0, "USDC": 1500000.0, "USDT": 800000.0, "EURR": 250000.0}.get(cur, 1000.0)

    def base(ts, typ, **kw):
        e = dict(ts=ts, cur=cur, type=typ, side="-", inst=None, amount=0.0, position=None, price=None,
                 price_currency=cur, mark=0.0, commission=None, cashflow=0.0, change=0.0, interest_pl=None,
                 trade_id=None, order_id=None, role="", fee_role="", pac=False, ip="", info=None,
                 extra={}, tags={typ}, addrs=set())
        e.update(kw)
        return e

    ev.append(base(t0, "deposit", amount=deposit_amt, change=deposit_amt,
                   info={"transaction": "0x" + "%064x" % rng.getrandbits(256), "deposit_type": "wallet",
                         "addr": _addr(rng, cur)}))
    trade_seq = [0]

    def trade(ts, inst, direction=None, amount=None, price=None, scen=False):
        i = INSTRUMENTS.get(inst)
        kind = "option" if (i is None or i["kind"] == "option") else "future"
        p0 = pos.get(inst, 0.0)
        if direction is None:
            direction = rng.choice(["buy", "sell"])
        if amount is None:
            if kind == "option":
                amount = round(rng.randint(1, 30) / 10.0, 1)
            elif i["quote"] == "USD":
                amount = float(rng.randint(1, 500) * 10)
            else:
                amount = round(rng.randint(1, 200) / 100.0, 2)
        signed = amount if direction == "buy" else -amount
        oc = "close" if (p0 > 0 and direction == "sell") or (p0 < 0 and direction == "buy") else "open"
        p1 = round(p0 + signed, 8)
        pos[inst] = p1
        price = price if price is not None else _price_at(inst, ts)
        role = rng.choice(["maker", "taker"])
        fee_role = role if rng.random() > 0.08 else ("taker" if role == "maker" else "maker")
        if kind == "option":
            fee = round(amount * 0.0003, 8)
            premium = round(amount * price, 8)
            change = round((-premium if direction == "buy" else premium) - fee, 8)
            cashflow = round(-premium if direction == "buy" else premium, 8)
            pcur = cur
        else:
            fee = round((amount / price * 0.0005) if i["quote"] == "USD" else amount * price * 0.0005, 8)
            change = -fee
            cashflow = round(rng.uniform(-0.05, 0.05) * (1 if cur != "USDC" else 4000), 8)
            pcur = "USD" if i["quote"] == "USD" else i["quote"]
        trade_seq[0] += 1
        tags = {"trade", role, oc, direction, kind}
        extra = {}
        info = "source: api"
        if not scen and rng.random() < 0.03:
            tags.add("liquidation")
            info = "source: liquidation"
        elif not scen and rng.random() < 0.05:
            tags.add("block_trade")
            info = "source: block_trade"
            extra["block_rfq_id"] = rng.randint(1000, 99999)
        if kind == "future" and "PERPETUAL" in inst:
            extra["funding_rate"] = round(rng.uniform(-0.0001, 0.0003), 8)
        if ts >= 1609459200000:
            extra["contracts"] = round(amount / (i["unit"] if i else 1), 4) if i else amount
        return base(ts, "trade", side=f"{oc} {direction}", inst=inst, amount=amount, position=p1, price=price,
                    price_currency=pcur, mark=round(price * (1 + rng.uniform(-0.001, 0.001)), 4),
                    commission=fee, cashflow=cashflow, change=change,
                    trade_id=f"{cur}-{uid % 1000}{rng.randint(100000, 999999)}",
                    order_id=f"ix-{rng.randint(10 ** 9, 10 ** 10)}", role=role, fee_role=fee_role,
                    ip=f"10.{uid % 200}.{rng.randint(0, 255)}.{rng.randint(1, 254)}", info=info,
                    extra=extra, tags=tags)

    for ts in ts_list:
        r = rng.random()
        if futs and r < 0.42:
            ev.append(trade(ts, rng.choice(futs + opts)))
        elif futs and r < 0.58:
            perp = futs[0]
            p = pos.get(perp, 0.0)
            if p == 0:
                ev.append(trade(ts, perp))
                continue
            fund = round(rng.uniform(-0.002, 0.004), 8)
            pl = round(rng.uniform(-0.02, 0.02), 8)
            ev.append(base(ts, "settlement", side="long" if p > 0 else "short", inst=perp, amount=abs(p),
                           position=p, price=_price_at(perp, ts), mark=_price_at(perp, ts),
                           price_currency="USD" if cur != "USDC" else "USDC",
                           cashflow=0.0, change=round(pl + fund, 8), interest_pl=fund,
                           info={"settlement_price": _price_at(perp, ts), "floating_pl": pl},
                           extra={"funding_rate": round(rng.uniform(-0.0001, 0.0003), 8)},
                           tags={"settlement", "future"}))
        elif r < 0.64:
            amt = round(deposit_amt * rng.uniform(0.01, 0.1), 6)
            ev.append(base(ts, "deposit", amount=amt, change=amt,
                           info={"transaction": "0x" + "%064x" % rng.getrandbits(256),
                                 "deposit_type": "wallet", "addr": _addr(rng, cur)}))
        elif r < 0.71:
            amt = round(deposit_amt * rng.uniform(0.005, 0.05), 6)
            addr = scenario.get("wd_addr", {}).get(cur) or _addr(rng, cur)
            ev.append(base(ts, "withdrawal", amount=amt, change=-amt,
                           info={"addr": addr, "transaction": "0x" + "%064x" % rng.getrandbits(256)},
                           addrs={addr}))
        elif r < 0.80:
            other = 70002 if uid == 70001 else (user["main"] or 70003)
            amt = round(deposit_amt * rng.uniform(0.001, 0.03), 6)
            sign = rng.choice([1, -1])
            oname = USERS.get(other, USERS[70001])["username"]
            ev.append(base(ts, "transfer", amount=amt, change=sign * amt,
                           info={"transfer_type": "subaccount", "other_user_id": other, "other_user": oname},
                           addrs={oname}))
        elif r < 0.85:
            amt = round(deposit_amt * rng.uniform(0.001, 0.01), 6)
            sign = rng.choice([1, -1])
            ev.append(base(ts, "swap", amount=amt, change=sign * amt, price=round(rng.uniform(0.9, 1.1), 6),
                           info={"swap_pair": f"{cur}/USDC", "direction": "sell" if sign < 0 else "buy"}))
        elif r < 0.88:
            amt = round(rng.uniform(-0.001, 0.001) * deposit_amt, 8)
            ev.append(base(ts, "correction", amount=abs(amt), change=amt, info="manual correction"))
        elif r < 0.94:
            amt = round(deposit_amt * 1e-5 * rng.uniform(1, 5), 8)
            ev.append(base(ts, "rebate", amount=amt, change=amt, info={"program": "maker_rebate"},
                           tags={"rebate"}))
        else:
            amt = round(deposit_amt * 2e-5 * rng.uniform(1, 5), 8)
            ev.append(base(ts, "yield_accrual", amount=amt, change=amt, info=None, tags={"yield_accrual"}))

    # scenario: option expiries
    if scenario.get("expiries") and cur in OTM_EXPIRED:
        inst = OTM_EXPIRED[cur]
        amt = 2.0 if cur == "BTC" else 3.0
        t_buy = OTM_EXPIRY_TS - 46 * 86400000 + (0 if cur == "BTC" else 2 * 86400000)
        ev.append(trade(t_buy, inst, "buy", amt, 0.0125 if cur == "BTC" else 0.0078, scen=True))
        pos[inst] = 0.0
        ev.append(base(OTM_EXPIRY_TS, "expiry", inst=inst, amount=amt, position=0.0, price=0.0,
                       mark=0.0, cashflow=0.0, change=0.0, info=None, tags={"expiry", "option"}))
        if F("txlog_expiry_extra_entry") and cur == "ETH":
            ev.append(base(OTM_EXPIRY_TS, "delivery", side="close sell", inst=inst, amount=amt, position=0.0,
                           price=0.0, mark=0.0, cashflow=0.0, change=0.0, tags={"delivery", "option", "close", "sell"}))
        if cur == "BTC":
            inst2 = ITM_EXPIRED
            ev.append(trade(ITM_EXPIRY_TS - 56 * 86400000, inst2, "buy", 1.0, 0.061, scen=True))
            deliv = round((94000.0 - 60000.0) / 94000.0, 8)
            ev.append(base(ITM_EXPIRY_TS, "delivery", side="close sell", inst=inst2, amount=1.0, position=0.0,
                           price=94000.0, price_currency="USD", mark=0.3617, cashflow=deliv, change=deliv,
                           extra={"delivery_settlement_price": 94000.0, "delivery_index_price": 94012.55},
                           tags={"delivery", "option", "close", "sell"}))
    return ev



TXLOG_PLAN = {
    70001: {"BTC": 190, "ETH": 130, "USDC": 80, "USDT": 40, "EURR": 25},
    70002: {"BTC": 40, "ETH": 25},
    70003: {"USDC": 8},
    70010: {"ETH": 30},
    70011: {"BTC": 12},
}
WITHDRAW_ADDR = {"BTC": "bc1qindepmainwithdrawaddr0000000000000000", "ETH": "0x1ndep0000000000000000000000000000000beef"}


def build_txlog():
    rng = random.Random(2110)
    allev = []
    for uid, plan in TXLOG_PLAN.items():
        for cur, n in plan.items():
            scen = {"expiries": uid == 70001, "wd_addr": WITHDRAW_ADDR if uid == 70001 else {}}
            for e in _gen_events(rng, uid, cur, n, scen):
                e["uid"] = uid
                allev.append(e)
    order = {"trade": 0, "delivery": 1, "expiry": 1}
    allev.sort(key=lambda e: (e["ts"], e["uid"], order.get(e["type"], 2), e["cur"]))
    logs = {uid: [] for uid in USERS}
    seq = {uid: 0 for uid in USERS}
    bal = {}
    comm = {}
    for i, e in enumerate(allev):
        uid = e["uid"]
        seq[uid] += 1
        k = (uid, e["cur"])
        bal[k] = round(bal.get(k, 0.0) + e["change"], 8)
        if e["commission"] is not None:
            comm[k] = round(comm.get(k, 0.0) + e["commission"], 8)
        h = (i * 2654435761) % 1000
        upl = round((h - 500) / 1e5 * (1 if e["cur"] in ("BTC", "ETH") else 100), 8)
        rec = OrderedDict()
        rec["id"] = 3000000 + 3 * i
        rec["user_seq"] = seq[uid]
        rec["user_id"] = uid
        rec["username"] = USERS[uid]["username"]
        rec["timestamp"] = e["ts"]
        rec["currency"] = e["cur"]
        rec["type"] = e["type"]
        rec["side"] = e["side"]
        rec["instrument_name"] = e["inst"]
        rec["amount"] = e["amount"]
        rec["position"] = e["position"]
        rec["price"] = e["price"]
        rec["price_currency"] = e["price_currency"]
        rec["mark_price"] = e["mark"]
        rec["commission"] = comm.get(k) if e["commission"] is not None else None
        rec["cashflow"] = e["cashflow"]
        rec["change"] = e["change"]
        rec["balance"] = bal[k]
        rec["equity"] = round(bal[k] + upl, 8)
        rec["interest_pl"] = e["interest_pl"]
        rec["total_interest_pl"] = round((h % 97) / 1e4, 8)
        rec["session_rpl"] = round(((h * 7) % 200 - 100) / 1e5, 8)
        rec["session_upl"] = upl
        rec["trade_id"] = e["trade_id"]
        rec["order_id"] = e["order_id"]
        rec["user_role"] = e["role"]
        rec["fee_role"] = e["fee_role"]
        rec["profit_as_cashflow"] = e["pac"]
        rec["ip"] = e["ip"]
        rec["info"] = e["info"]
        for kk, vv in e["extra"].items():
            rec[kk] = vv
        logs[uid].append({"pub": dict(rec), "id": rec["id"], "ts": e["ts"], "cur": e["cur"],
                          "tags": e["tags"], "addrs": e["addrs"], "type": e["type"]})
    return logs


TOH_PLAN = {70001: {"BTC": 130, "ETH": 47, "USDC": 12}, 70002: {"BTC": 9}, 70010: {"ETH": 5}, 70011: {}, 70003: {}}


def build_toh():
    rng = random.Random(4242)
    out = {uid: [] for uid in USERS}
    seq = 0
    for uid, plan in TOH_PLAN.items():
        for cur, n in plan.items():
            futs, opts = CUR_INSTR[cur]
            ts = 1745971200000 - rng.randint(0, 3600) * 1000
            for _ in range(n):
                seq += 1
                ts -= rng.randint(600, 30 * 3600) * 1000
                inst = rng.choice(futs + opts)
                i = INSTRUMENTS[inst]
                kind = i["kind"]
                r = rng.random()
                trailing = kind == "future" and r < 0.25
                st = rng.random()
                if st < 0.55:
                    state, req = "triggered", "trigger:order"
                elif st < 0.85:
                    state, req = "cancelled", "cancel"
                else:
                    state, req = "rejected:" + rng.choice(["reduce_direction", "insufficient_funds", "post_only_reject"]), "trigger:order"
                otype = rng.choice(["limit", "market"])
                mark = i["mark"]
                tp = round(mark * rng.uniform(0.85, 1.15), 2 if kind == "future" else 4)
                if kind == "option":
                    amount = round(rng.randint(1, 50) / 10.0, 1)
                elif i["quote"] == "USD":
                    amount = float(rng.randint(1, 300) * i["unit"])
                else:
                    amount = round(rng.randint(1, 100) * i["unit"], 6)
                e = OrderedDict()
                e["timestamp"] = ts
                e["trigger"] = rng.choice(["index_price", "mark_price", "last_price"])
                if kind == "future":
                    e["trigger_price"] = tp
                if trailing:
                    e["offset"] = round(mark * rng.uniform(0.005, 0.03), 2)
                prefix = "TSTS" if trailing else ("SLTS" if otype == "market" else "SLIS")
                e["trigger_order_id"] = f"{prefix}-{10000000 + seq}"
                e["order_id"] = f"ix-{2000000000 + seq * 17}" if state == "triggered" else e["trigger_order_id"]
                e["order_state"] = state
                e["request"] = req
                e["instrument_name"] = inst
                e["direction"] = rng.choice(["buy", "sell"])
                e["price"] = tp if otype == "market" else round(tp * rng.uniform(0.995, 1.005), 4)
                e["amount"] = amount
                e["last_update_timestamp"] = ts + rng.randint(0, 5000)
                e["reduce_only"] = rng.random() < 0.3
                e["post_only"] = otype == "limit" and rng.random() < 0.2
                e["order_type"] = otype
                if rng.random() < 0.3:
                    e["label"] = rng.choice(["hedge", "stop-guard", "tp-1", "desk/alpha"])
                e["is_secondary_oco"] = rng.random() < 0.1
                if rng.random() < 0.12:
                    e["oco_ref"] = f"OCO-{5000 + seq}"
                e["source"] = rng.choice(["api", "web", "api"])
                out[uid].append({"pub": dict(e), "ts": ts, "seq": seq, "cur": cur, "inst": inst})
        out[uid].sort(key=lambda x: (-x["ts"], -x["seq"]))
    return out


MMP_DATA = {
    70001: [
        dict(index_name="btc_usd", frozen_until=4102444800000, block_rfq=False),
        dict(index_name="eth_usdc", frozen_until=0, block_rfq=False),
        dict(index_name="btc_usd", frozen_until=4102444860000, mmp_group="mq_alpha", block_rfq=False),
        dict(index_name="steth_usdc", frozen_until=4102444920000, block_rfq=False),
        dict(index_name="drbfix-btc_usdc", frozen_until=0, mmp_group="mq_beta", block_rfq=False),
        dict(index_name="btc_usd", frozen_until=0, block_rfq=True),
        dict(index_name="eth_usd", frozen_until=4102445000000, block_rfq=True),
    ],
    70002: [dict(index_name="eth_usd", frozen_until=0, block_rfq=False)],
    70003: [], 70010: [dict(index_name="eth_usdc", frozen_until=4102444800000, block_rfq=False)], 70011: [],
}

MEMBERS = [
    dict(mid=3, display_name="desk-tokyo-01", is_active=True, owner_id=70001, user_ids=[70001, 70002], updated_at=1731000000000),
    dict(mid=7, display_name="desk-ldn", is_active=True, owner_id=70001, user_ids=[70001], updated_at=1741000000000),
    dict(mid=11, display_name="legacy-mm", is_active=False, owner_id=70001, user_ids=[70002], updated_at=1690000000000),
    dict(mid=12, display_name="m" * 20 + "-sixty-four-characters-exactly-" + "x" * 13, is_active=True, owner_id=70001,
         user_ids=[70001, 70003], updated_at=1741000000000),
    dict(mid=15, display_name="\u00fcn\u00efc\u00f6d\u00e9 \u0434\u0435\u0441\u043a", is_active=True, owner_id=70001, user_ids=[70001], updated_at=1744000000000),
    dict(mid=21, display_name="probe", is_active=False, owner_id=70001, user_ids=[70003], updated_at=0),
]
assert len(MEMBERS[3]["display_name"]) == 64

POSITIONS = {
    70001: {"BTC-PERPETUAL": 12000.0, "ETH-PERPETUAL": -4500.0, "BTC-27JUN25": 3000.0,
            "BTC-27JUN25-100000-C": 2.5, "ETH-27JUN25-3000-P": -10.0, "BTC_USDC-PERPETUAL": 0.35},
    70002: {"BTC-PERPETUAL": -2000.0, "ETH-27JUN25": 1000.0},
    70003: {}, 70010: {"ETH-PERPETUAL": 100.0}, 70011: {"BTC-PERPETUAL": 50.0},
}


def build_vol(cur):
    if cur not in ("BTC", "ETH"):
        return []
    pts = []
    base = 48.0 if cur == "BTC" else 62.0
    start = DATA_END - 16 * 86400000
    for k in range(16 * 24 + 1):
        t = start + k * 3600000
        v = round(base + 9 * math.sin(k / 17.0) + 3 * math.cos(k / 5.0), 2)
        if cur == "ETH" and F("vol_eth_seconds"):
            t //= 1000
        pts.append([t, v])
    return pts


# ---------------------------------------------------------------- scope model
FAMS = ("account", "block_rfq", "trade", "wallet")
LEVEL = {"none": 0, "read": 1, "read_write": 2}
SESSION_RE = re.compile(r"[A-Za-z0-9_.-]{1,32}\Z")


class Scope:
    def __init__(self, mode="connection", session=None, expires=None, ip=None, fam=None, main=False):
        self.mode, self.session, self.expires, self.ip = mode, session, expires, ip
        self.fam = dict(fam or {})
        self.main = main

    def copy(self):
        return Scope(self.mode, self.session, self.expires, self.ip, self.fam, self.main)

    def text(self):
        parts = ["connection" if self.mode == "connection" else "session:" + self.session]
        if self.expires:
            parts.append(f"expires:{self.expires}")
        if self.ip:
            parts.append(f"ip:{self.ip}")
        for f in FAMS:
            parts.append(f"{f}:{self.fam[f]}")
        if self.main:
            parts.append("mainaccount")
        sep = "," if (self.expires and F("scope_comma_separated")) else " "
        return sep.join(parts)

    def has(self, fam, lvl):
        return LEVEL[self.fam.get(fam, "none")] >= LEVEL[lvl]


def parse_scope(s):
    """Parse a requested scope string.  Returns dict or raises invalid_scope."""
    req = {"mode": None, "session": None, "expires": None, "ip": None, "fam": {}}
    if s is None:
        return req
    for tok in s.split():
        if tok == "connection":
            if req["mode"]:
                raise RpcError("invalid_scope", "connection/session given twice", "scope")
            req["mode"] = "connection"
        elif tok.startswith("session:"):
            name = tok[8:]
            if req["mode"]:
                raise RpcError("invalid_scope", "connection/session given twice", "scope")
            if not SESSION_RE.match(name):
                raise RpcError("invalid_scope", "session name must be 1-32 of [A-Za-z0-9_.-]", "scope")
            req["mode"], req["session"] = "session", name
        elif tok.startswith("expires:"):
            v = tok[8:]
            if req["expires"] is not None or not re.fullmatch(r"[0-9]{1,9}", v) or not 1 <= int(v) <= MAX_EXPIRES:
                raise RpcError("invalid_scope", f"expires must be 1..{MAX_EXPIRES}", "scope")
            req["expires"] = int(v)
        elif tok.startswith("ip:"):
            try:
                req["ip"] = str(ipaddress.ip_address(tok[3:]))
            except ValueError:
                raise RpcError("invalid_scope", "bad ip address", "scope")
        elif ":" in tok and tok.split(":", 1)[0] in FAMS and tok.split(":", 1)[1] in LEVEL:
            f, lv = tok.split(":", 1)
            if f in req["fam"]:
                raise RpcError("invalid_scope", f"{f} given twice", "scope")
            req["fam"][f] = lv
        else:
            raise RpcError("invalid_scope", f"unknown scope value {tok[:64]}", "scope")
    return req


def min_level(a, b):
    return a if LEVEL[a] <= LEVEL[b] else b


# ---------------------------------------------------------------- state
class Token:
    __slots__ = ("access", "refresh", "user", "key", "scope", "sid", "issued", "ttl", "conn", "access_ok",
                 "refresh_ok", "refresh_exp", "via")

    def expired(self, t):
        limit = self.issued + self.ttl * 1000 * (2 if F("expiry_not_enforced") else 1)
        return t >= limit


class Conn:
    _n = 0

    def __init__(self, peer, transport):
        Conn._n += 1
        self.id = Conn._n
        self.peer = peer
        self.transport = transport
        self.remembered = None


class State:
    def __init__(self):
        self.by_access = {}
        self.by_refresh = {}
        self.sessions = OrderedDict()    # (key, user, name) -> sid
        self.sid_n = 0
        self.nonces = {k: set() for k in KEYS}
        self.tfa_used = set()
        self.login_enabled = {uid: True for uid in USERS}
        self.buckets = {}
        self.txlog = build_txlog()
        self.toh = build_toh()
        self.members = [dict(m) for m in MEMBERS]
        self.positions = {u: dict(p) for u, p in POSITIONS.items()}
        self.locked = set()
        self.da_open_orders = {70001: 4, 70002: 1}
        self.order_n = 0
        self.trade_n = 0
        self.vol = {c: build_vol(c) for c in VOL_CURRENCIES}

    # -- tokens
    def issue(self, user, key, scope, conn_id=None, via="key", sid=None):
        t = Token()
        t.access = "ixat." + secrets.token_hex(20)
        t.refresh = "ixrt." + secrets.token_hex(20)
        t.user, t.key, t.scope = user, key, scope
        t.issued = now_ms()
        t.ttl = scope.expires or DEFAULT_TTL
        t.conn = conn_id if scope.mode == "connection" else None
        t.access_ok = t.refresh_ok = True
        t.refresh_exp = t.issued + REFRESH_TTL * 1000
        t.via = via
        if scope.mode == "session":
            t.sid = sid or self.open_session(key, user, scope.session)
        else:
            t.sid = None
        self.by_access[t.access] = t
        self.by_refresh[t.refresh] = t
        self.gc()
        return t

    def open_session(self, key, user, name):
        k = (key, user, name)
        if k in self.sessions:
            self.sessions.move_to_end(k)
            return self.sessions[k]
        mine = [x for x in self.sessions if x[0] == key and x[1] == user]
        if len(mine) >= SESSIONS_PER_KEY:
            old = mine[0]
            self.revoke_sid(self.sessions.pop(old))
        self.sid_n += 1
        sid = f"ix.sess.{self.sid_n}"
        self.sessions[k] = sid
        return sid

    def revoke_sid(self, sid):
        for t in list(self.by_access.values()):
            if t.sid == sid:
                t.access_ok = t.refresh_ok = False
        for k, v in list(self.sessions.items()):
            if v == sid:
                del self.sessions[k]

    def conn_closed(self, conn_id):
        for t in list(self.by_access.values()):
            if t.conn == conn_id:
                t.access_ok = t.refresh_ok = False

    def gc(self):
        if len(self.by_access) < 50000:
            return
        t0 = now_ms()
        for a, t in list(self.by_access.items()):
            if (not t.access_ok or t.expired(t0)) and (not t.refresh_ok or t0 >= t.refresh_exp):
                del self.by_access[a]
                self.by_refresh.pop(t.refresh, None)

    def token_set(self, t):
        res = OrderedDict()
        res["access_token"] = t.access
        res["token_type"] = "bearer"
        res["expires_in"] = t.ttl
        res["refresh_token"] = t.refresh
        res["scope"] = t.scope.text()
        feats = list(KEYS[t.key]["features"])
        if F("enabled_features_unknown") and t.key == "ix_sub_rw":
            feats = ["block_trade_approval_required"]
        res["enabled_features"] = feats
        if t.sid:
            res["sid"] = t.sid
        return res

    def use_nonce(self, client_id, nonce_key):
        s = self.nonces[client_id]
        if nonce_key in s:
            return False
        if len(s) > 200000:
            s.clear()
        s.add(nonce_key)
        return True


STATE = None


# ---------------------------------------------------------------- params
def coerce(params, spec, from_query):
    out = {}
    for k, v in params.items():
        t = spec.get(k)
        if t is None:
            raise RpcError("invalid_params", f"unknown parameter {k[:64]}", k[:64])
        if from_query:
            if t == "s":
                pass
            elif t == "i":
                if not re.fullmatch(r"-?[0-9]{1,18}", v):
                    raise RpcError("invalid_params", "integer expected", k)
                v = int(v)
            elif t == "b":
                if v not in ("true", "false"):
                    raise RpcError("invalid_params", "true or false expected", k)
                v = v == "true"
            elif t == "n":
                if not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?", v):
                    raise RpcError("invalid_params", "number expected", k)
                v = float(v)
                if not math.isfinite(v) or abs(v) > 1e15:
                    raise RpcError("invalid_params", "number out of range", k)
        else:
            if t == "s" and not isinstance(v, str):
                raise RpcError("invalid_params", "string expected", k)
            if t == "i" and (not isinstance(v, int) or isinstance(v, bool)):
                raise RpcError("invalid_params", "integer expected", k)
            if t == "b" and not isinstance(v, bool):
                raise RpcError("invalid_params", "boolean expected", k)
            if t == "n":
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    raise RpcError("invalid_params", "number expected", k)
                try:
                    fv = float(v)
                except OverflowError:
                    raise RpcError("invalid_params", "number out of range", k)
                if not math.isfinite(fv) or abs(fv) > 1e15:
                    raise RpcError("invalid_params", "number out of range", k)
        if t == "s" and len(v) > MAX_STR:
            raise RpcError("invalid_params", "string too long", k)
        if t == "i" and not -(2 ** 63) <= v < 2 ** 63:
            raise RpcError("invalid_params", "integer out of range", k)
        out[k] = v
    return out


def need(p, k):
    if k not in p:
        raise RpcError("invalid_params", f"{k} is required", k)
    return p[k]


def enum(p, k, allowed, required=True):
    if k not in p:
        if required:
            raise RpcError("invalid_params", f"{k} is required", k)
        return None
    if p[k] not in allowed:
        raise RpcError("invalid_params", f"{k} must be one of " + ", ".join(allowed), k)
    return p[k]


# ---------------------------------------------------------------- request context / auth
class Ctx:
    def __init__(self, transport, conn, peer, headers=None, http_method="GET", raw_target="", body=b""):
        self.transport = transport
        self.conn = conn
        self.peer = peer
        self.headers = headers or {}
        self.http_method = http_method
        self.raw_target = raw_target
        self.body = body


class Principal:
    def __init__(self, user, key, scope, token=None, via="bearer"):
        self.user, self.key, self.scope, self.token, self.via = user, key, scope, token, via


def key_scope(key_id, mode="connection"):
    k = KEYS[key_id]
    return Scope(mode=mode, fam=dict(k["max"]), main=is_main(k["user"]))


def check_sig_ts(ts, window_ms):
    t = now_ms()
    if ts > t + SIG_FUTURE_MS:
        raise RpcError("stale_timestamp", "timestamp is in the future")
    if t - ts > window_ms:
        raise RpcError("stale_timestamp", "timestamp older than 60 s")


def validate_token(ctx, access):
    t = STATE.by_access.get(access)
    if t is None or not t.access_ok:
        raise RpcError("token_invalid", "unknown or revoked access token")
    if t.expired(now_ms()):
        raise RpcError("token_expired", "access token expired")
    if t.conn is not None and (ctx.conn is None or ctx.conn.id != t.conn):
        raise RpcError("token_invalid", "connection-scoped token bound to another WebSocket connection")
    if t.scope.ip and t.scope.ip != ctx.peer:
        raise RpcError("ip_not_allowed", "token restricted to another address")
    return t


def authenticate(ctx, explicit):
    if ctx.transport == "ws":
        access = explicit
        if access is None:
            access = ctx.conn.remembered
            if access is None:
                raise RpcError("not_authenticated", "access_token required")
        t = validate_token(ctx, access)
        if explicit is not None and t.scope.mode == "session" and not F("ws_session_not_remembered"):
            ctx.conn.remembered = t.access
        return Principal(t.user, t.key, t.scope, t, "bearer")
    if ctx.transport == "da":
        raise RpcError("da_key_invalid")
    h = ctx.headers.get("authorization")
    if h is None:
        raise RpcError("not_authenticated", "Authorization header required")
    scheme, _, rest = h.partition(" ")
    sl = scheme.lower()
    rest = rest.strip()
    if sl == "bearer":
        t = validate_token(ctx, rest)
        return Principal(t.user, t.key, t.scope, t, "bearer")
    if sl == "basic":
        if F("basic_rejected"):
            raise RpcError("not_authenticated", "unsupported authorization scheme")
        try:
            raw = base64.b64decode(rest, validate=True).decode("utf-8")
        except Exception:
            raise RpcError("invalid_credentials", "malformed Basic credentials")
        cid, sep, sec = raw.partition(":")
        k = KEYS.get(cid)
        if not sep or k is None or not hmac.compare_digest(k["secret"].encode(), sec.encode()):
            raise RpcError("invalid_credentials", "unknown client id or wrong secret")
        return Principal(k["user"], cid, key_scope(cid), None, "basic")
    if sl == SIG_SCHEME:
        fields = {}
        for part in rest.split(","):
            kk, eq, vv = part.strip().partition("=")
            if not eq or kk in fields or kk not in ("id", "ts", "nonce", "sig"):
                raise RpcError("invalid_credentials", "malformed signed authorization header")
            fields[kk] = vv
        if set(fields) != {"id", "ts", "nonce", "sig"} or not fields["nonce"] or not re.fullmatch(r"[0-9]{1,15}", fields["ts"]):
            raise RpcError("invalid_credentials", "malformed signed authorization header")
        cid = fields["id"]
        k = KEYS.get(cid)
        if k is None:
            raise RpcError("invalid_credentials", "unknown client id")
        if not re.fullmatch(r"[0-9a-f]{64}", fields["sig"]):
            raise RpcError("invalid_signature", "signature must be 64 lowercase hex digits")
        ts = int(fields["ts"])
        check_sig_ts(ts, SIG_WINDOW_MS)
        uri = ctx.raw_target
        if F("sig_header_path_only"):
            uri = uri.split("?", 1)[0]
        data = (fields["ts"] + "\n" + fields["nonce"] + "\n" + ctx.http_method.upper() + "\n" + uri + "\n").encode() + ctx.body + b"\n"
        want = hmac.new(k["secret"].encode(), data, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(want, fields["sig"]):
            raise RpcError("invalid_signature", "signature mismatch")
        if not F("sig_header_nonce_reusable"):
            if not STATE.use_nonce(cid, ("n", fields["nonce"])):
                raise RpcError("nonce_reused", "nonce already used")
        return Principal(k["user"], cid, key_scope(cid), None, "signed")
    raise RpcError("not_authenticated", "unsupported authorization scheme")


def require_scope(pr, fam, lvl):
    if not pr.scope.has(fam, lvl):
        raise RpcError("scope_insufficient", f"{fam}:{lvl} required")


def require_main_scope(pr):
    if not pr.scope.main:
        raise RpcError("scope_insufficient", "mainaccount required")


def check_tfa(pr, p, state_value=None):
    secret = USERS[pr.user]["tfa"]
    if not secret or F("tfa_not_required"):
        return
    if F("tfa_enable_unchecked") and state_value == "enable":
        return
    code = p.get(TFA_PARAM)
    if code is None:
        raise RpcError("security_key_authorization_error", "second factor required: send " + TFA_PARAM)
    if not re.fullmatch(r"[0-9]{6}", code):
        raise RpcError("security_key_invalid", "second factor must be 6 digits")
    ctr = int(time.time() // TOTP_STEP)
    for c in (ctr - 1, ctr, ctr + 1):
        if hmac.compare_digest(hotp(secret, c), code):
            if (pr.user, c) in STATE.tfa_used:
                raise RpcError("security_key_invalid", "second factor already used")
            STATE.tfa_used.add((pr.user, c))
            return
    raise RpcError("security_key_invalid", "second factor does not match")


# ---------------------------------------------------------------- methods: auth
AUTH_GRANT_PARAMS = {
    "client_credentials": {"grant_type", "client_id", "client_secret", "scope", "state"},
    "client_signature": {"grant_type", "client_id", "timestamp", "signature", "nonce", "data", "scope", "state"},
    "refresh_token": {"grant_type", "refresh_token", "scope", "state"},
}


def grant_scope(key_id, user, req, base=None):
    """Build a granted scope from a request; families capped by base (or the key maximum)."""
    mx = base.fam if base else KEYS[key_id]["max"]
    fam = {}
    for f in FAMS:
        r = req["fam"].get(f)
        fam[f] = mx[f] if r is None else min_level(r, mx[f])
    return Scope(mode=req["mode"] or "connection", session=req["session"], expires=req["expires"],
                 ip=req["ip"], fam=fam, main=is_main(user))


def m_auth(ctx, pr, p):
    gt = enum(p, "grant_type", list(AUTH_GRANT_PARAMS))
    extra = set(p) - AUTH_GRANT_PARAMS[gt]
    if extra:
        k = sorted(extra)[0]
        raise RpcError("invalid_params", f"{k} is not a parameter of grant {gt}", k)
    req = parse_scope(p.get("scope"))
    conn_id = ctx.conn.id if ctx.transport == "ws" else None
    if gt == "client_credentials":
        cid = need(p, "client_id")
        sec = need(p, "client_secret")
        k = KEYS.get(cid)
        if k is None or not hmac.compare_digest(k["secret"].encode(), sec.encode()):
            raise RpcError("invalid_credentials", "unknown client id or wrong secret")
        t = STATE.issue(k["user"], cid, grant_scope(cid, k["user"], req), conn_id)
    elif gt == "client_signature":
        cid = need(p, "client_id")
        ts = need(p, "timestamp")
        sig = need(p, "signature")
        nonce = p.get("nonce", "")
        data = p.get("data", "")
        k = KEYS.get(cid)
        if k is None:
            raise RpcError("invalid_credentials", "unknown client id")
        if not re.fullmatch(r"[0-9a-f]{64}", sig):
            raise RpcError("invalid_signature", "signature must be 64 lowercase hex digits")
        check_sig_ts(ts, SIG_WINDOW_MS + (1000 if F("client_sig_window_61s") else 0))
        msg = f"{ts}\n{nonce}\n{data}"
        if F("client_sig_no_trailing_lf") and "data" not in p:
            msg = f"{ts}\n{nonce}"
        want = hmac.new(k["secret"].encode(), msg.encode("utf-8"), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(want, sig):
            raise RpcError("invalid_signature", "signature mismatch")
        if not F("client_sig_nonce_reusable"):
            nk = ("n", nonce) if nonce else ("ts-sig", ts, sig)
            if not STATE.use_nonce(cid, nk):
                raise RpcError("nonce_reused", "nonce already used")
        t = STATE.issue(k["user"], cid, grant_scope(cid, k["user"], req), conn_id)
    else:
        rt = need(p, "refresh_token")
        old = STATE.by_refresh.get(rt)
        if old is None or not old.refresh_ok or now_ms() >= old.refresh_exp:
            raise RpcError("token_invalid", "unknown, used or revoked refresh token")
        if old.conn is not None and (ctx.conn is None or ctx.conn.id != old.conn):
            raise RpcError("token_invalid", "connection-scoped token bound to another WebSocket connection")
        if req["mode"] and (req["mode"] != old.scope.mode or req["session"] != old.scope.session):
            raise RpcError("invalid_scope", "refresh cannot change connection/session", "scope")
        sc = old.scope.copy()
        for f, lv in req["fam"].items():
            sc.fam[f] = min_level(lv, old.scope.fam[f])
        if req["expires"]:
            sc.expires = req["expires"]
        if req["ip"]:
            sc.ip = req["ip"]
        if sc.mode == "session" and F("refresh_drops_session"):
            sc.mode, sc.session = "connection", None
        if F("refresh_same_refresh_token"):
            STATE.by_refresh.pop(old.refresh, None)
        if old.scope.mode == "session":
            old.refresh_ok = False
            t = STATE.issue(old.user, old.key, sc, None, old.via, sid=old.sid if sc.mode == "session" else None)
        else:
            old.refresh_ok = False
            if not F("refresh_keeps_old_token"):
                old.access_ok = False
            t = STATE.issue(old.user, old.key, sc, old.conn, old.via)
        if F("refresh_same_refresh_token"):
            STATE.by_refresh.pop(t.refresh, None)
            t.refresh = rt
            STATE.by_refresh[rt] = t
    res = STATE.token_set(t)
    if gt == "refresh_token" and F("token_type_capitalized"):
        res["token_type"] = "Bearer"
    res["mfa_status"] = "enabled" if USERS[t.user]["tfa"] else "disabled"
    res["is_idp_login"] = False
    if "state" in p:
        res["state"] = p["state"]
    if gt == "client_signature" and "data" in p and not F("client_sig_data_not_returned"):
        res["data"] = p["data"]
    if ctx.transport == "ws" and t.scope.mode == "session" and not F("ws_session_not_remembered"):
        ctx.conn.remembered = t.access
    return res


def m_exchange_token(ctx, pr, p):
    rt = need(p, "refresh_token")
    subject = need(p, "subject_id")
    old = STATE.by_refresh.get(rt)
    if old is None or not old.refresh_ok or now_ms() >= old.refresh_exp:
        raise RpcError("token_invalid", "unknown, used or revoked refresh token")
    if old.conn is not None and (ctx.conn is None or ctx.conn.id != old.conn):
        raise RpcError("token_invalid", "connection-scoped token bound to another WebSocket connection")
    if subject not in USERS or USERS[subject]["main"] is None or subject == old.user \
            or main_of(subject) != main_of(old.user):
        raise RpcError("subject_not_allowed", "subject_id must be another subaccount of the same main account", "subject_id")
    req = parse_scope(p.get("scope"))
    caller = old.scope
    fam = dict(caller.fam)
    for f, lv in req["fam"].items():
        if LEVEL[lv] > LEVEL[caller.fam[f]] and not F("exchange_scope_exceeds"):
            raise RpcError("scope_exceeds_permissions", f"{f}:{lv} exceeds the caller's {f}:{caller.fam[f]}", "scope")
        fam[f] = lv
    sc = Scope(mode=req["mode"] or "connection", session=req["session"],
               expires=req["expires"] or caller.expires, ip=req["ip"] or caller.ip, fam=fam, main=False)
    target = subject
    if "scope" in p and F("exchange_override_wrong_subject"):
        target = old.user
        sc.main = is_main(target)
    conn_id = ctx.conn.id if ctx.transport == "ws" else None
    t = STATE.issue(target, old.key, sc, conn_id, via="exchange")
    return STATE.token_set(t)


def m_fork_token(ctx, pr, p):
    rt = need(p, FORK_REFRESH_PARAM)
    name = need(p, FORK_NAME_PARAM)
    old = STATE.by_refresh.get(rt)
    if old is None or not old.refresh_ok or now_ms() >= old.refresh_exp:
        raise RpcError("token_invalid", "unknown, used or revoked refresh token")
    if old.conn is not None and (ctx.conn is None or ctx.conn.id != old.conn):
        raise RpcError("token_invalid", "connection-scoped token bound to another WebSocket connection")
    if not SESSION_RE.match(name):
        raise RpcError("invalid_params", "session name must be 1-32 of [A-Za-z0-9_.-]", FORK_NAME_PARAM)
    if old.scope.mode != "session" and not F("fork_connection_token"):
        raise RpcError("fork_not_allowed", "connection-only tokens cannot be forked")
    if (old.key, old.user, name) in STATE.sessions or name == old.scope.session:
        raise RpcError("session_name_in_use", "a session with this name exists", FORK_NAME_PARAM)
    sc = old.scope.copy()
    sc.mode, sc.session = "session", name
    t = STATE.issue(old.user, old.key, sc, None, old.via)
    if F("fork_kills_parent"):
        for x in STATE.by_access.values():
            if x.sid and x.sid == old.sid:
                x.access_ok = False
    return STATE.token_set(t)


def m_logout(ctx, pr, p):
    if ctx.transport != "ws" and not F("logout_over_http"):
        raise RpcError("websocket_only", "private/logout is available on WebSocket only")
    t = pr.token
    if t is not None:
        if t.sid:
            sid = t.sid
            for x in list(STATE.by_access.values()):
                if x.sid == sid:
                    x.access_ok = False
                    if not F("logout_keeps_refresh"):
                        x.refresh_ok = False
            for k, v in list(STATE.sessions.items()):
                if v == sid:
                    del STATE.sessions[k]
        else:
            t.access_ok = False
            if not F("logout_keeps_refresh"):
                t.refresh_ok = False
    if ctx.conn is not None:
        ctx.conn.remembered = None
        ctx.close_after = True
    return "ok"


# ---------------------------------------------------------------- methods: account
def m_toggle_subaccount_login(ctx, pr, p):
    require_scope(pr, "account", "read" if F("toggle_scope_read_only") else "read_write")
    sid = need(p, "sid")
    st = enum(p, "state", ["enable", "disable"])
    check_tfa(pr, p, st)
    if not is_main(pr.user) or sid not in USERS or USERS[sid]["main"] != pr.user:
        raise RpcError("subaccount_not_found", "sid is not a subaccount of this account", "sid")
    STATE.login_enabled[sid] = st == "enable"
    if st == "disable" and not F("toggle_disable_keeps_sessions"):
        for t in STATE.by_access.values():
            if t.user == sid and t.via == "key":
                t.access_ok = t.refresh_ok = False
        for k in [k for k in STATE.sessions if k[1] == sid and KEYS[k[0]]["user"] == sid]:
            del STATE.sessions[k]
    return True if F("toggle_result_true") else "ok"


def m_get_mmp_status(ctx, pr, p):
    brfq = p.get("block_rfq", False)
    if brfq:
        if F("mmp_block_rfq_scope_trade"):
            require_scope(pr, "trade", "read")
        else:
            require_scope(pr, "block_rfq", "read")
    else:
        require_scope(pr, "trade", "read")
    idx = enum(p, "index_name", MMP_INDEX_REQ, required=False)
    grp = p.get("mmp_group")
    if grp is not None and idx is None and not F("mmp_group_without_index"):
        raise RpcError("invalid_params", "mmp_group requires index_name", "mmp_group")
    if grp == "" and F("mmp_empty_group_error"):
        raise RpcError("invalid_params", "mmp_group must not be empty", "mmp_group")
    out = []
    for e in MMP_DATA.get(pr.user, []):
        if e["block_rfq"] != brfq:
            continue
        if F("mmp_hides_frozen_zero") and e["frozen_until"] == 0:
            continue
        if idx is not None and idx != "all" and e["index_name"] != idx:
            continue
        if idx is not None:
            if grp:
                if e.get("mmp_group") != grp:
                    continue
            elif "mmp_group" in e:
                continue
        out.append(dict(e))
    return out


def m_get_trigger_order_history(ctx, pr, p):
    if not F("toh_scope_unchecked"):
        require_scope(pr, "trade", "read")
    cur = enum(p, "currency", TOH_CURRENCIES)
    inst = p.get("instrument_name")
    count = p.get("count", 10 if F("toh_default_count_10") else 20)
    if not 1 <= count <= (999 if F("toh_count_1000_rejected") else 1000):
        raise RpcError("invalid_params", "count must be 1..1000", "count")
    rows = [e for e in STATE.toh.get(pr.user, []) if e["cur"] == cur and (inst is None or e["inst"] == inst)]
    cont = p.get("continuation")
    later_page = False
    if cont is not None:
        m = re.fullmatch(r"([0-9a-f]{1,12})\.([0-9a-f]{1,8})", cont)
        if not m:
            raise RpcError("invalid_continuation", "malformed continuation", "continuation")
        key = (int(m.group(1), 16), int(m.group(2), 16))
        rows = [e for e in rows if (e["ts"], e["seq"]) <= key]
        later_page = True
    page, rest = rows[:count], rows[count:]
    entries = []
    for e in page:
        d = dict(e["pub"])
        if later_page and F("toh_trigger_index_page2") and d.get("trigger") == "index_price":
            d["trigger"] = "index"
        entries.append(d)
    nxt = f"{rest[0]['ts']:x}.{rest[0]['seq']:x}" if rest else "none"
    return {"entries": entries, "continuation": nxt}


def txlog_rate(pr):
    if F("txlog_no_rate_limit"):
        return
    t = time.monotonic()
    b = STATE.buckets.get(pr.user)
    if b is None:
        b = [float(TXLOG_BURST), t]
    b[0] = min(float(TXLOG_BURST), b[0] + (t - b[1]) * TXLOG_RATE)
    b[1] = t
    STATE.buckets[pr.user] = b
    if b[0] < 1.0:
        wait = int((1.0 - b[0]) / TXLOG_RATE * 1000) + 1
        raise RpcError("too_many_requests", "get_transaction_log: 1 request per second, burst 3",
                       extra={"retry_after_ms": wait})
    b[0] -= 1.0


def m_get_transaction_log(ctx, pr, p):
    cur = enum(p, "currency", TXLOG_CURRENCIES)
    st = need(p, "start_timestamp")
    en = need(p, "end_timestamp")
    if st < 0 or en < 0:
        raise RpcError("invalid_params", "timestamps must be >= 0", "start_timestamp" if st < 0 else "end_timestamp")
    if st > en:
        raise RpcError("invalid_params", "start_timestamp after end_timestamp", "start_timestamp")
    count = p.get("count", 100)
    if not 1 <= count <= (249 if F("txlog_count_250_rejected") else 250):
        raise RpcError("invalid_params", "count must be 1..250", "count")
    target = pr.user
    if "subaccount_id" in p:
        sid = p["subaccount_id"]
        if not is_main(pr.user) or sid not in USERS or USERS[sid]["main"] != pr.user:
            raise RpcError("subaccount_not_found", "subaccount_id is not a subaccount of this account", "subaccount_id")
        if not F("txlog_subaccount_ignored"):
            target = sid
    words = (p.get(TXLOG_FILTER_PARAM) or "").split()
    if F("txlog_filter_ignored"):
        words = []
    floor = now_ms() - 2 * 365 * 86400000 if F("txlog_two_year_cutoff") else -1
    end_ok = (lambda ts: ts < en) if F("txlog_end_exclusive") else (lambda ts: ts <= en)
    rows = []
    for e in STATE.txlog.get(target, []):
        if e["cur"] != cur or e["ts"] < st or not end_ok(e["ts"]) or e["ts"] < floor:
            continue
        if any((w not in e["tags"]) if w in TX_KEYWORDS else (w not in e["addrs"]) for w in words):
            continue
        rows.append(e)
    cont = p.get("continuation")
    if cont is not None:
        if cont < 1:
            raise RpcError("invalid_continuation", "continuation must be >= 1", "continuation")
        rows = [e for e in rows if e["id"] >= cont]
    page, rest = rows[:count], rows[count:]
    logs = []
    for e in page:
        d = dict(e["pub"])
        if F("txlog_transfer_side_empty") and d["type"] == "transfer":
            d["side"] = ""
        logs.append(d)
    nxt = rest[0]["id"] if rest else None
    if nxt is None and page and len(page) == count and F("txlog_full_last_page_continuation"):
        nxt = page[-1]["id"] + 1
    if nxt is not None and ctx.transport == "ws" and F("txlog_continuation_string_ws"):
        nxt = str(nxt)
    return {"logs": logs, "continuation": nxt}


def m_get_currencies(ctx, pr, p):
    out = []
    for c in CURRENCIES:
        d = dict(c)
        d["withdrawal_priorities"] = [dict(x) for x in c["withdrawal_priorities"]]
        if F("currency_coin_type_erc20") and d["currency"] == "USDT":
            d["coin_type"] = "ERC20"
        out.append(d)
    return out


def m_get_historical_volatility(ctx, pr, p):
    cur = enum(p, "currency", VOL_CURRENCIES)
    return [list(x) for x in STATE.vol[cur]]


def member_view(m, full):
    d = OrderedDict()
    if full:
        d["mid"] = m["mid"]
    d["display_name"] = m["display_name"]
    d["is_active"] = m["is_active"]
    if full:
        d["owner_id"] = m["owner_id"]
        d["user_ids"] = list(m["user_ids"])
        d["updated_at"] = m["updated_at"]
    return d


def m_delete_member(ctx, pr, p):
    require_scope(pr, "account", "read_write")
    if not F("delete_member_no_mainaccount"):
        require_main_scope(pr)
    if not USERS[pr.user]["da"] and not F("delete_member_no_da_check"):
        raise RpcError("direct_access_not_enabled", "Direct Access trading is not enabled for this account")
    mid = need(p, "member_id")
    if mid < 1:
        raise RpcError("invalid_params", "member_id must be >= 1", "member_id")
    owner = main_of(pr.user)
    found = [m for m in STATE.members if m["mid"] == mid and m["owner_id"] == owner]
    if not found:
        raise RpcError("member_not_found", "no member with this id", "member_id")
    if not F("delete_member_keeps_deleted"):
        STATE.members.remove(found[0])
    rest = [m for m in STATE.members if m["owner_id"] == owner]
    rest.sort(key=lambda m: (-m["updated_at"], -m["mid"]))
    full = is_main(pr.user)
    return {"members": [member_view(m, full) for m in rest], "is_direct_access_allowed": bool(USERS[owner]["da"])}


def m_close_position(ctx, pr, p):
    require_scope(pr, "trade", "read_write")
    inst = need(p, "instrument_name")
    typ = enum(p, "type", ["limit", "market"])
    price = p.get("price")
    if price is not None:
        if typ == "market":
            raise RpcError("invalid_params", "price is only for limit orders", "price")
        if price <= 0:
            raise RpcError("invalid_params", "price must be > 0", "price")
    if inst not in INSTRUMENTS:
        raise RpcError("unknown_instrument", "unknown instrument", "instrument_name")
    if F("da_lock_blocks_rest") and (pr.user in STATE.locked or main_of(pr.user) in STATE.locked):
        raise RpcError("portfolio_locked", "portfolio is locked")
    pos = STATE.positions.get(pr.user, {}).get(inst, 0.0)
    if not pos:
        raise RpcError("no_open_position", "no open position in this instrument", "instrument_name")
    i = INSTRUMENTS[inst]
    bs = book_summary(inst)
    direction = "sell" if pos > 0 else "buy"
    amount = abs(pos)
    unit = i["unit"]
    nunits = round(amount / unit)
    t = now_ms()
    STATE.order_n += 1
    order_id = f"ix-{7000000000 + STATE.order_n}"
    if typ == "market":
        px = bs["bid_price"] if direction == "sell" else bs["ask_price"]
        tick = 0.5 if i["kind"] == "future" and i["quote"] == "USD" else (0.0005 if i["kind"] == "option" else 0.1)
        if nunits >= 2:
            u1 = max(1, int(nunits * 0.6))
            parts = [(round(u1 * unit, 8), px), (round((nunits - u1) * unit, 8), round(px - tick if direction == "sell" else px + tick, 4))]
        else:
            parts = [(amount, px)]
        liq = "T"
    else:
        px = price if (price is not None and not F("close_limit_price_ignored")) else bs["mark_price"]
        parts = [(amount, px)]
        liq = "M"
    trades = []
    for k, (a, tp) in enumerate(parts):
        STATE.trade_n += 1
        if i["kind"] == "option":
            fee = round(a * 0.0003, 8)
        elif i["quote"] == "USD":
            fee = round(a / tp * 0.0005, 8)
        else:
            fee = round(a * tp * 0.0005, 6)
        tr = OrderedDict()
        tr["trade_seq"] = 500000 + STATE.trade_n
        tr["trade_id"] = f"{i['cur']}-{9100000 + STATE.trade_n}"
        tr["timestamp"] = t + k
        tr["tick_direction"] = (STATE.trade_n + k) % 4
        tr["state"] = "filled"
        tr["reduce_only"] = True
        tr["price"] = tp
        tr["post_only"] = False
        tr["order_type"] = typ
        tr["order_id"] = order_id
        tr["matching_id"] = None
        tr["mark_price"] = bs["mark_price"]
        tr["liquidity"] = liq
        tr["instrument_name"] = inst
        tr["index_price"] = INDEX_PRICE[i["index"]]
        tr["fee_currency"] = i["cur"]
        tr["fee"] = fee
        tr["direction"] = direction
        tr["amount"] = a
        trades.append(tr)
    avg = round(sum(a * tp for a, tp in parts) / amount, 8)
    o = OrderedDict()
    o["web"] = False
    o["api"] = True
    o["time_in_force"] = "good_til_cancelled" if typ == "limit" else "immediate_or_cancel"
    o["replaced"] = False
    o["reduce_only"] = True
    o["post_only"] = False
    o["price"] = px
    o["order_type"] = typ
    o["order_state"] = "filled"
    o["order_id"] = order_id
    o["max_show"] = amount
    o["last_update_timestamp"] = t + len(parts)
    o["creation_timestamp"] = t
    o["label"] = None if F("close_label_null") else ""
    o["is_rebalance"] = False
    o["is_liquidation"] = False
    o["instrument_name"] = inst
    o["filled_amount"] = amount
    o["average_price"] = avg
    o["direction"] = direction
    o["amount"] = amount
    STATE.positions[pr.user][inst] = 0.0
    return {"trades": trades, "order": o}


def m_get_book_summary_by_instrument(ctx, pr, p):
    inst = need(p, "instrument_name")
    if inst not in INSTRUMENTS:
        return {} if F("book_summary_object") else []
    s = book_summary(inst)
    return s if F("book_summary_object") else [s]


# name -> (handler, param spec, private, static scope)
METHODS = {
    "public/auth": (m_auth, {"grant_type": "s", "client_id": "s", "client_secret": "s", "refresh_token": "s",
                             "timestamp": "i", "signature": "s", "nonce": "s", "data": "s", "scope": "s",
                             "state": "s"}, False, None),
    "public/exchange_token": (m_exchange_token, {"refresh_token": "s", "subject_id": "i", "scope": "s"}, False, None),
    "public/fork_token": (m_fork_token, {FORK_REFRESH_PARAM: "s", FORK_NAME_PARAM: "s"}, False, None),
    "private/logout": (m_logout, {}, True, None),
    "private/toggle_subaccount_login": (m_toggle_subaccount_login, {"sid": "i", "state": "s", TFA_PARAM: "s"}, True, None),
    "private/get_mmp_status": (m_get_mmp_status, {"index_name": "s", "mmp_group": "s", "block_rfq": "b"}, True, None),
    "private/get_trigger_order_history": (m_get_trigger_order_history, {"currency": "s", "instrument_name": "s",
                                                                       "count": "i", "continuation": "s"}, True, None),
    "private/get_transaction_log": (m_get_transaction_log, {"currency": "s", "start_timestamp": "i", "end_timestamp": "i",
                                                           TXLOG_FILTER_PARAM: "s", "count": "i", "subaccount_id": "i",
                                                           "continuation": "i"}, True, ("account", "read")),
    "public/get_currencies": (m_get_currencies, {}, False, None),
    "public/get_historical_volatility": (m_get_historical_volatility, {"currency": "s"}, False, None),
    "private/delete_member": (m_delete_member, {"member_id": "i"}, True, None),
    "private/close_position": (m_close_position, {"instrument_name": "s", "type": "s", "price": "n"}, True, None),
    "public/get_book_summary_by_instrument": (m_get_book_summary_by_instrument, {"instrument_name": "s"}, False, None),
}


def dispatch(ctx, method, params, from_query):
    m = METHODS.get(method)
    if m is None:
        raise RpcError("method_not_found", f"unknown method {method[:80]}")
    handler, spec, private, static_scope = m
    params = dict(params)
    explicit = None
    if ctx.transport == "ws" and "access_token" in params:
        explicit = params.pop("access_token")
        if not isinstance(explicit, str):
            raise RpcError("invalid_params", "access_token must be a string", "access_token")
    pr = None
    if private:
        pr = authenticate(ctx, explicit)
        if method == "private/get_transaction_log":
            txlog_rate(pr)
        if static_scope:
            require_scope(pr, *static_scope)
    p = coerce(params, spec, from_query)
    return handler(ctx, pr, p)


# ---------------------------------------------------------------- envelopes
def _wrap_id(i):
    if F("id_int32_wrap") and isinstance(i, int) and i >= 2 ** 31:
        return ((i + 2 ** 31) % 2 ** 32) - 2 ** 31
    return i


def env_ok(rid, result, t_in):
    t_out = time.time_ns() // 1000
    return OrderedDict([("jsonrpc", "2.0"), ("id", _wrap_id(rid)), ("result", result),
                        ("usIn", t_in), ("usOut", t_out), ("usDiff", t_out - t_in)])


def env_err(rid, e, t_in, ws=False):
    t_out = time.time_ns() // 1000
    d = OrderedDict()
    if not (ws and F("ws_error_no_jsonrpc")):
        d["jsonrpc"] = "2.0"
    d["id"] = _wrap_id(rid)
    d["error"] = e.obj()
    d["usIn"], d["usOut"], d["usDiff"] = t_in, t_out, t_out - t_in
    return d


def _reject_constant(c):
    raise ValueError("non-finite number")


def _no_dupes(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError("duplicate key " + k[:40])
        d[k] = v
    return d


def parse_json(raw):
    return json.loads(raw, parse_constant=_reject_constant, object_pairs_hook=_no_dupes)


class _EnvErr(Exception):
    def __init__(self, err, rid):
        super().__init__(err.name)
        self.err, self.rid = err, rid


def check_envelope(msg):
    """Validate a JSON-RPC request object; returns (id, method, params)."""
    if not isinstance(msg, dict):
        raise _EnvErr(RpcError("invalid_request", "request must be a JSON object (batches are not supported)"), None)
    rid = msg.get("id")
    id_ok = isinstance(rid, int) and not isinstance(rid, bool) and -(2 ** 63) <= rid < 2 ** 63
    echo = rid if id_ok else None
    extra = set(msg) - {"jsonrpc", "id", "method", "params"}
    if msg.get("jsonrpc") != "2.0":
        raise _EnvErr(RpcError("invalid_request", "jsonrpc must be \"2.0\""), echo)
    if not id_ok:
        raise _EnvErr(RpcError("invalid_request", "id must be an integer"), None)
    if not isinstance(msg.get("method"), str):
        raise _EnvErr(RpcError("invalid_request", "method must be a string"), echo)
    if "params" not in msg or not isinstance(msg["params"], dict):
        raise _EnvErr(RpcError("invalid_request", "params must be an object ({} when there are none)"), echo)
    if extra:
        raise _EnvErr(RpcError("invalid_request", "unknown envelope member " + sorted(extra)[0][:40]), echo)
    return rid, msg["method"], msg["params"]


# ---------------------------------------------------------------- logging
VERBOSE = False


def log(transport, method, outcome, t_in):
    if VERBOSE:
        dt = (time.time_ns() // 1000 - t_in) / 1000.0
        print(f"{time.strftime('%H:%M:%S')} {transport:4} {method or '-'} -> {outcome} ({dt:.1f} ms)",
              file=sys.stderr, flush=True)


# ---------------------------------------------------------------- HTTP
REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 413: "Payload Too Large", 426: "Upgrade Required", 429: "Too Many Requests",
           431: "Request Header Fields Too Large", 500: "Internal Server Error", 101: "Switching Protocols"}


def http_bytes(status, obj, keep_alive, extra_headers=()):
    body = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}",
             "Content-Type: application/json; charset=utf-8",
             f"Content-Length: {len(body)}",
             "Connection: " + ("keep-alive" if keep_alive else "close")]
    lines.extend(extra_headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def handle_http(conn, method, target, headers, body):
    """Returns (status, json object, method name for logging)."""
    t_in = time.time_ns() // 1000
    split = urllib.parse.urlsplit(target)
    path, query = split.path, split.query
    rid = 0
    rpc_method = None
    try:
        if path == DA_LOCK_PATH or path.startswith(DA_PREFIX + "/"):
            return handle_da(conn, method, path, query, headers, body, t_in)
        if not path.startswith(API_PREFIX):
            raise RpcError("method_not_found", "unknown path")
        rpc_method = path[len(API_PREFIX):]
        if method != "GET":
            raise RpcError("invalid_request", "only GET is supported", http=405)
        if rpc_method not in METHODS:
            raise RpcError("method_not_found", f"unknown method {rpc_method[:80]}")
        from_query = True
        params = {}
        if body.strip():
            if query:
                raise RpcError("invalid_request", "send parameters either as query or as a JSON-RPC body, not both")
            try:
                msg = parse_json(body.decode("utf-8"))
            except Exception:
                raise RpcError("parse_error", "body is not valid JSON")
            rid, m2, params = check_envelope(msg)
            if m2 != rpc_method:
                raise RpcError("invalid_request", "method in body differs from the path")
            from_query = False
            if F("get_body_params_ignored"):
                params = {}
        elif query:
            try:
                pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=True,
                                               errors="strict", max_num_fields=64)
            except Exception:
                raise RpcError("invalid_params", "malformed query string")
            for k, v in pairs:
                if k in params:
                    raise RpcError("invalid_params", f"parameter {k[:64]} given twice", k[:64])
                params[k] = v
        ctx = Ctx("http", None, conn.peer, headers, method, target, body)
        result = dispatch(ctx, rpc_method, params, from_query)
        status = 202 if (not from_query and F("body_get_status_202")) else 200
        return status, env_ok(rid, result, t_in), rpc_method
    except _EnvErr as ee:
        e, rid = ee.err, ee.rid
        return e.http, env_err(rid, e, t_in), rpc_method
    except RpcError as e:
        return e.http, env_err(rid, e, t_in), rpc_method


def handle_da(conn, method, path, query, headers, body, t_in):
    rid = 0
    try:
        if path != DA_LOCK_PATH:
            raise RpcError("method_not_found", "unknown Direct Access path")
        if method != "GET":
            raise RpcError("invalid_request", "only GET is supported", http=405)
        if query:
            raise RpcError("invalid_params", "lock_portfolio takes no parameters")
        if body.strip():
            try:
                msg = parse_json(body.decode("utf-8"))
            except Exception:
                raise RpcError("parse_error", "body is not valid JSON")
            rid, m2, params = check_envelope(msg)
            if m2 != "private/lock_portfolio":
                raise RpcError("invalid_request", "method in body differs from the path")
            if params:
                raise RpcError("invalid_params", "lock_portfolio takes no parameters")
        h = headers.get("authorization", "")
        scheme, _, val = h.partition(" ")
        val = val.strip()
        if scheme.lower() != "bearer" or not val:
            raise RpcError("da_key_invalid", "Authorization: Bearer <API_KEY> required")
        uid = DA_KEYS.get(val)
        if uid is None and F("da_accepts_access_token"):
            t = STATE.by_access.get(val)
            if t is not None and t.access_ok:
                uid = t.user
        if uid is None:
            raise RpcError("da_key_invalid", "unknown Direct Access API key")
        STATE.locked.add(uid)
        STATE.da_open_orders[uid] = 0
        return 200, env_ok(rid, "ok", t_in), "da/lock_portfolio"
    except _EnvErr as ee:
        return ee.err.http, env_err(ee.rid, ee.err, t_in), "da/lock_portfolio"
    except RpcError as e:
        return e.http, env_err(rid, e, t_in), "da/lock_portfolio"


# ---------------------------------------------------------------- WebSocket
class WSClose(Exception):
    def __init__(self, code, reason=""):
        super().__init__(code)
        self.code, self.reason = code, reason


def ws_frame(op, payload):
    n = len(payload)
    if n < 126:
        hdr = struct.pack(">BB", 0x80 | op, n)
    elif n < 65536:
        hdr = struct.pack(">BBH", 0x80 | op, 126, n)
    else:
        hdr = struct.pack(">BBQ", 0x80 | op, 127, n)
    return hdr + payload


def unmask(data, mask):
    if not data:
        return data
    n = len(data)
    m = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "big") ^ int.from_bytes(m, "big")).to_bytes(n, "big")


async def ws_recv(reader, writer):
    op_msg = None
    frags = []
    total = 0
    while True:
        h = await reader.readexactly(2)
        fin, rsv, op = h[0] & 0x80, h[0] & 0x70, h[0] & 0x0F
        masked, ln = h[1] & 0x80, h[1] & 0x7F
        if rsv:
            raise WSClose(1002, "reserved bits set")
        if not masked:
            raise WSClose(1002, "client frames must be masked")
        if ln == 126:
            ln = struct.unpack(">H", await reader.readexactly(2))[0]
        elif ln == 127:
            ln = struct.unpack(">Q", await reader.readexactly(8))[0]
        if op >= 8 and (not fin or ln > 125):
            raise WSClose(1002, "bad control frame")
        if total + ln > MAX_WS_MSG:
            raise WSClose(1009, "message too big")
        mask = await reader.readexactly(4)
        data = unmask(await reader.readexactly(ln), mask)
        if op == 8:
            return 8, data
        if op == 9:
            writer.write(ws_frame(10, data))
            await writer.drain()
            continue
        if op == 10:
            continue
        if op in (1, 2):
            if op_msg is not None:
                raise WSClose(1002, "new message inside a fragmented one")
            op_msg, frags = op, [data]
        elif op == 0:
            if op_msg is None:
                raise WSClose(1002, "continuation without a message")
            frags.append(data)
        else:
            raise WSClose(1002, "unknown opcode")
        total += ln
        if fin:
            return op_msg, b"".join(frags)


def ws_process(conn, text):
    """One JSON-RPC message -> response dict."""
    t_in = time.time_ns() // 1000
    rid = None
    method = None
    try:
        try:
            msg = parse_json(text)
        except Exception:
            raise RpcError("parse_error", "message is not valid JSON")
        res = check_envelope(msg)
        rid, method, params = res
        ctx = Ctx("ws", conn, conn.peer)
        ctx.close_after = False
        result = dispatch(ctx, method, params, False)
        conn.close_after = getattr(ctx, "close_after", False)
        log("ws", method, "ok", t_in)
        return env_ok(rid, result, t_in)
    except _EnvErr as ee:
        log("ws", method, ee.err.name, t_in)
        return env_err(ee.rid, ee.err, t_in, ws=True)
    except RpcError as e:
        log("ws", method, e.name, t_in)
        return env_err(rid, e, t_in, ws=True)
    except Exception as ex:  # never crash on a message
        log("ws", method, "internal " + type(ex).__name__, t_in)
        return env_err(rid, RpcError("invalid_request", "internal error: " + type(ex).__name__, http=500), t_in, ws=True)


async def ws_session(reader, writer, conn):
    conn.close_after = False
    code = 1000
    try:
        while True:
            op, data = await ws_recv(reader, writer)
            if op == 8:
                if len(data) >= 2:
                    c = struct.unpack(">H", data[:2])[0]
                    code = c if c in (1000, 1001) or 3000 <= c < 5000 or 1002 <= c <= 1014 and c not in (1004, 1005, 1006) else 1002
                else:
                    code = 1000
                writer.write(ws_frame(8, struct.pack(">H", code)))
                await writer.drain()
                return
            if op == 2:
                resp = env_err(None, RpcError("invalid_request", "binary frames are not accepted; send JSON text"),
                               time.time_ns() // 1000, ws=True)
            else:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    raise WSClose(1007, "invalid UTF-8")
                resp = ws_process(conn, text)
            out = json.dumps(resp, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            writer.write(ws_frame(1, out))
            await writer.drain()
            if conn.close_after:
                writer.write(ws_frame(8, struct.pack(">H", 1000) + b"logout"))
                await writer.drain()
                return
    except WSClose as wc:
        try:
            writer.write(ws_frame(8, struct.pack(">H", wc.code) + wc.reason.encode()[:120]))
            await writer.drain()
        except Exception:
            pass
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        STATE.conn_closed(conn.id)


# ---------------------------------------------------------------- connection handler
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
WRITERS = set()
TASKS = set()


async def read_chunked(reader):
    body = bytearray()
    while True:
        line = await reader.readuntil(b"\r\n")
        try:
            size = int(line.split(b";")[0].strip(), 16)
        except ValueError:
            raise RpcError("invalid_request", "bad chunk size")
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return bytes(body)
        if len(body) + size > MAX_BODY:
            raise RpcError("request_too_large", f"body larger than {MAX_BODY} bytes")
        body += await reader.readexactly(size)
        await reader.readexactly(2)


async def handle_conn(reader, writer):
    peer = writer.get_extra_info("peername")
    peer_ip = peer[0] if peer else "127.0.0.1"
    conn = Conn(peer_ip, "http")
    WRITERS.add(writer)
    task = asyncio.current_task()
    TASKS.add(task)
    try:
        while True:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEADER_TIMEOUT)
            except (asyncio.LimitOverrunError, ValueError):
                e = RpcError("request_too_large", "header section too large", http=431)
                writer.write(http_bytes(431, env_err(None, e, time.time_ns() // 1000), False))
                await writer.drain()
                return
            except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError):
                return
            t_in = time.time_ns() // 1000
            try:
                text = head.decode("latin-1")
                lines = text.split("\r\n")
                parts = lines[0].split(" ")
                if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
                    raise RpcError("invalid_request", "malformed request line")
                method, target, version = parts
                headers = {}
                for ln in lines[1:]:
                    if not ln:
                        continue
                    k, sep, v = ln.partition(":")
                    if not sep or not k or k != k.strip():
                        raise RpcError("invalid_request", "malformed header line")
                    k = k.lower()
                    v = v.strip()
                    if k in headers:
                        if k in ("authorization", "content-length", "host", "sec-websocket-key"):
                            raise RpcError("invalid_request", f"duplicate {k} header")
                        headers[k] += ", " + v
                    else:
                        headers[k] = v
            except RpcError as e:
                writer.write(http_bytes(400, env_err(None, e, t_in), False))
                await writer.drain()
                return
            keep = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
            # WebSocket upgrade
            if urllib.parse.urlsplit(target).path == WS_PATH:
                up = headers.get("upgrade", "").lower()
                conn_tokens = [x.strip().lower() for x in headers.get("connection", "").split(",")]
                key = headers.get("sec-websocket-key", "")
                try:
                    kb = base64.b64decode(key, validate=True)
                except Exception:
                    kb = b""
                if method != "GET" or up != "websocket" or "upgrade" not in conn_tokens or len(kb) != 16 \
                        or headers.get("sec-websocket-version") != "13":
                    e = RpcError("invalid_request", "WebSocket upgrade required (RFC 6455, version 13)", http=426)
                    writer.write(http_bytes(426, env_err(None, e, t_in), False, ["Sec-WebSocket-Version: 13"]))
                    await writer.drain()
                    return
                acc = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
                writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              f"Sec-WebSocket-Accept: {acc}\r\n\r\n").encode())
                await writer.drain()
                conn.transport = "ws"
                log("ws", "upgrade", "101", t_in)
                await ws_session(reader, writer, conn)
                return
            # body
            body = b""
            try:
                if "chunked" in headers.get("transfer-encoding", "").lower():
                    body = await asyncio.wait_for(read_chunked(reader), HEADER_TIMEOUT)
                elif "content-length" in headers:
                    cl = headers["content-length"]
                    if not re.fullmatch(r"[0-9]{1,10}", cl):
                        raise RpcError("invalid_request", "bad Content-Length")
                    if int(cl) > MAX_BODY:
                        raise RpcError("request_too_large", f"body larger than {MAX_BODY} bytes")
                    body = await asyncio.wait_for(reader.readexactly(int(cl)), HEADER_TIMEOUT)
            except RpcError as e:
                writer.write(http_bytes(e.http, env_err(None, e, t_in), False))
                await writer.drain()
                return
            except (asyncio.IncompleteReadError, asyncio.TimeoutError, asyncio.LimitOverrunError, ValueError, ConnectionError):
                return
            try:
                status, obj, mname = handle_http(conn, method, target, headers, body)
            except Exception as ex:  # never crash on a request
                status, obj, mname = 500, env_err(None, RpcError("invalid_request", "internal error: " + type(ex).__name__, http=500), t_in), None
            log("http", mname, status if status == 200 else f"{status} {obj.get('error', {}).get('message')}", t_in)
            writer.write(http_bytes(status, obj, keep))
            await writer.drain()
            if not keep:
                return
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
        pass
    except Exception as ex:
        if VERBOSE:
            print(f"connection error: {type(ex).__name__}: {ex}", file=sys.stderr)
    finally:
        TASKS.discard(task)
        WRITERS.discard(writer)
        try:
            writer.close()
        except Exception:
            pass


# ---------------------------------------------------------------- main
async def amain(port):
    global STATE
    STATE = State()
    server = await asyncio.start_server(handle_conn, "127.0.0.1", port, limit=MAX_HEADER)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, stop.set)
    print(f"listening on 127.0.0.1:{port} (interface {INTERFACE_VERSION}; faults: {','.join(sorted(ACTIVE)) or 'none'})",
          file=sys.stderr, flush=True)
    await stop.wait()
    server.close()
    for w in list(WRITERS):
        try:
            w.close()
        except Exception:
            pass
    for t in list(TASKS):
        t.cancel()
    if TASKS:
        await asyncio.wait(list(TASKS), timeout=2.0)
    try:
        await asyncio.wait_for(server.wait_closed(), 2.0)
    except Exception:
        pass


def main(argv=None):
    global VERBOSE
    ap = argparse.ArgumentParser(description="JSON-RPC trading API server (interface 2.1.1)")
    ap.add_argument("--port", type=int, default=8812)
    ap.add_argument("--faults", default="")
    ap.add_argument("--list-faults", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args(argv)
    if a.list_faults:
        try:
            for name, (rule, sec, near) in FAULTS.items():
                print(f"{name}\t{rule} (SPEC.md {sec})")
            sys.stdout.flush()
        except BrokenPipeError:
            sys.stdout = None
        return 0
    names = [x.strip() for x in a.faults.split(",") if x.strip()]
    bad = [x for x in names if x not in FAULTS]
    if bad:
        print("unknown fault(s): " + ", ".join(bad), file=sys.stderr)
        return 2
    ACTIVE.update(names)
    VERBOSE = a.verbose
    try:
        asyncio.run(amain(a.port))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
