'use strict';
// One realistic SDK session against the API of SPEC.md, optionally with one seeded fault.
const T = require('./transport');

const TRIGGER_CURRENCIES = ['BTC', 'ETH', 'USDC', 'USDT', 'EURR'];
const HV_CURRENCIES = ['BTC', 'ETH', 'USDC', 'USDT', 'EURR'];
const TLOG_CURRENCIES = ['BTC', 'ETH', 'STETH', 'ETHW', 'USDC', 'USDT', 'EURR', 'SOL', 'XRP', 'USYC', 'PAXG', 'BNB', 'USDE'];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class Session {
  constructor(cfg, fault) {
    this.cfg = cfg;
    this.fault = fault || null;
    this.calls = 0;
    this.reached = false; // has the server answered anything yet?
    this.buckets = new Map();
    this.sockets = [];
  }

  f(name) {
    if (this.fault === name) { process.stderr.write(`# fault ${name} applied\n`); return true; }
    return false;
  }

  log(method, transport, res) {
    this.calls += 1;
    let status;
    if (res.ok) status = 'ok';
    else status = `error ${res.code}`;
    process.stdout.write(`${String(this.calls).padStart(3)} ${method} ${transport} ${status}\n`);
  }

  // ---------- rate limit of private/get_transaction_log (token bucket, as configured) ----------
  async paceTxLog(key) {
    const rate = this.cfg.transaction_log_rate || {};
    const perSecond = Number(rate.per_second) > 0 ? Number(rate.per_second) : 1.0;
    const burst = Number(rate.burst) >= 1 ? Math.floor(Number(rate.burst)) : 1;
    const k = rate.counted_per === 'account' ? `account:${key.account}` : `token:${key.token}`;
    let b = this.buckets.get(k);
    const now = Date.now();
    if (!b) { b = { tokens: burst, at: now }; this.buckets.set(k, b); }
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond);
    b.at = now;
    if (b.tokens < 1) {
      const waitMs = Math.ceil(((1 - b.tokens) / perSecond) * 1000) + 60;
      await sleep(waitMs);
      const n2 = Date.now();
      b.tokens = Math.min(burst, b.tokens + ((n2 - b.at) / 1000) * perSecond);
      b.at = n2;
    }
    b.tokens -= 1;
  }

  bucketTokens(key) {
    const rate = this.cfg.transaction_log_rate || {};
    const perSecond = Number(rate.per_second) > 0 ? Number(rate.per_second) : 1.0;
    const burst = Number(rate.burst) >= 1 ? Math.floor(Number(rate.burst)) : 1;
    const k = rate.counted_per === 'account' ? `account:${key.account}` : `token:${key.token}`;
    const b = this.buckets.get(k);
    if (!b) return burst;
    return Math.min(burst, b.tokens + ((Date.now() - b.at) / 1000) * perSecond);
  }

  // ---------- HTTP JSON-RPC ----------
  // opts: mode 'query'|'body'; auth {bearer}|{basic: account}|{signed: account}|{header: raw}; httpMethod
  async http(method, params, opts = {}) {
    const mode = opts.mode || 'query';
    const httpMethod = opts.httpMethod || 'GET';
    let url = `${this.cfg.base_url.replace(/\/+$/, '')}/${method}`;
    let body = null;
    if (mode === 'query') {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(params || {})) {
        if (v === undefined || v === null) continue;
        qs.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
      }
      const s = qs.toString();
      if (s) url += `?${s}`;
    } else {
      const env = { jsonrpc: '2.0', id: T.newId(), method };
      if (params !== undefined) env.params = params;
      if (opts.mutate) opts.mutate(env);
      body = JSON.stringify(env);
    }
    const headers = {};
    const a = opts.auth;
    if (a) {
      if (a.bearer) headers.Authorization = `${opts.bearerWord || 'Bearer'} ${a.bearer}`;
      else if (a.basic) headers.Authorization = T.basicHeader(a.basic.client_id, a.basic.client_secret, a.opts || {});
      else if (a.signed) {
        const u = new URL(url);
        headers.Authorization = T.signedHeader(this.cfg.signature_scheme || 'svc-hmac-sha256', a.signed.client_id,
          a.signed.client_secret, httpMethod, u.pathname + u.search, body, a.opts || {});
      } else if (a.header) headers.Authorization = a.header;
    }
    const transport = mode === 'query' ? 'http-get-query' : (httpMethod === 'GET' ? 'http-get-body' : `http-${httpMethod.toLowerCase()}-body`);
    return this._httpSend(method, transport, url, { method: httpMethod, headers, body });
  }

  async _httpSend(label, transport, url, req) {
    let res;
    try {
      res = await T.httpRequest(url, req);
    } catch (err) {
      if (!this.reached && T.isUnreachable(err)) throw new T.Unreachable(err.code || err.message);
      const r = { ok: false, code: `network(${err.code || err.message})` };
      this.log(label, transport, r);
      return r;
    }
    this.reached = true;
    let msg = null;
    try { msg = JSON.parse(res.body); } catch (e) { msg = null; }
    let r;
    if (msg && typeof msg === 'object' && 'result' in msg && res.status === 200) r = { ok: true, result: msg.result };
    else if (msg && msg.error) r = { ok: false, code: msg.error.code !== undefined ? msg.error.code : `http${res.status}`, error: msg.error };
    else if (res.status === 200 && msg !== null) r = { ok: true, result: msg };
    else r = { ok: false, code: `http${res.status}` };
    this.log(label, transport, r);
    return r;
  }

  // ---------- WebSocket JSON-RPC ----------
  async ws() {
    try {
      const s = await T.WebSocketClient.connect(this.cfg.ws_url);
      this.reached = true;
      this.sockets.push(s);
      return s;
    } catch (err) {
      if (!this.reached && T.isUnreachable(err)) throw new T.Unreachable(err.code || err.message);
      process.stdout.write(`    websocket connect failed: ${err.code || err.message}\n`);
      return null;
    }
  }

  async wsCall(sock, method, params, opts = {}) {
    if (!sock || sock.closed) {
      const r = { ok: false, code: 'no-connection' };
      this.log(method, 'ws', r);
      return r;
    }
    const env = { jsonrpc: '2.0', id: T.newId(), method, params: params === undefined ? {} : params };
    if (opts.mutate) opts.mutate(env);
    const msg = await sock.request(env);
    let r;
    if (msg.__transportError) r = { ok: false, code: `transport(${msg.__transportError})` };
    else if ('result' in msg) r = { ok: true, result: msg.result };
    else if (msg.error) r = { ok: false, code: msg.error.code !== undefined ? msg.error.code : 'error', error: msg.error };
    else r = { ok: false, code: 'malformed' };
    this.log(method, 'ws', r);
    return r;
  }

  closeAll() { for (const s of this.sockets) s.close(); }

  // =====================================================================================
  async run() {
    const cfg = this.cfg;
    const acc = cfg.accounts || {};
    const main = acc.main, sub = acc.sub, tfa = acc.two_factor;
    const cur = cfg.currency || 'BTC';
    const inst = cfg.instrument_name || null;
    const hvCur = HV_CURRENCIES.includes(cur) ? cur : 'BTC';
    const trigCur = TRIGGER_CURRENCIES.includes(cur) ? cur : 'BTC';
    const tlogCur = TLOG_CURRENCIES.includes(cur) ? cur : 'BTC';
    const subId = Number.isInteger(cfg.subaccount_id) ? cfg.subaccount_id : null;
    const tfaSubId = Number.isInteger(cfg.two_factor_subaccount_id) ? cfg.two_factor_subaccount_id : null;
    const rate = cfg.transaction_log_rate || {};
    const burst = Number(rate.burst) >= 1 ? Math.floor(Number(rate.burst)) : 1;
    const pageSize = burst >= 20 ? 5 : 50;
    const now = Date.now();
    const ok = (r) => r && r.ok;
    const tok = (r) => (r && r.ok && r.result && r.result.access_token ? r.result : null);

    // ---------------- public market data: all three transports ----------------
    await this.http('public/get_historical_volatility',
      { currency: this.f('hv_currency_outside_enum') ? 'STETH' : hvCur }, { mode: 'query' });
    let curParams = {};
    if (this.f('currencies_with_params')) curParams = { currency: cur };
    if (this.f('env_params_omitted')) curParams = undefined;
    await this.http('public/get_currencies', curParams, { mode: 'body' });
    const wsPublic = await this.ws();
    let markPrice = null;
    if (inst) {
      const r = await this.wsCall(wsPublic, 'public/get_book_summary_by_instrument',
        { instrument_name: this.f('book_instrument_array') ? [inst] : inst },
        { mutate: this.f('env_jsonrpc_version') ? (e) => { e.jsonrpc = '2.1'; } : null });
      let book = r;
      if (!ok(book) && this.fault) { // after a seeded fault: ask again correctly so the rest of the session stays the same
        book = await this.wsCall(wsPublic, 'public/get_book_summary_by_instrument', { instrument_name: inst });
      }
      if (ok(book) && Array.isArray(book.result) && book.result[0] && typeof book.result[0].mark_price === 'number') markPrice = book.result[0].mark_price;
    }

    // ---------------- main: connection-scoped token over HTTP, refresh ----------------
    let T1 = null, T1b = null;
    if (main) {
      T1 = tok(await this.http('public/auth', {
        grant_type: this.f('auth_grant_type_typo') ? 'client_credential' : 'client_credentials',
        client_id: main.client_id, client_secret: main.client_secret,
      }, { mode: 'query' }));
      if (!T1 && this.fault) { // recover after a seeded fault so that the rest of the session stays the same
        T1 = tok(await this.http('public/auth', { grant_type: 'client_credentials', client_id: main.client_id,
          client_secret: main.client_secret }, { mode: 'query' }));
      }
      if (T1) {
        if (this.f('http_token_in_query')) {
          await this.http('private/get_mmp_status', { access_token: T1.access_token }, { mode: 'query' });
        } else {
          await this.http('private/get_mmp_status', {}, { mode: 'query', auth: { bearer: T1.access_token },
            bearerWord: this.f('http_bearer_lowercase') ? 'bearer' : 'Bearer' });
        }
        T1b = tok(await this.http('public/auth', {
          grant_type: 'refresh_token',
          refresh_token: this.f('auth_refresh_with_access_token') ? T1.access_token : T1.refresh_token,
        }, { mode: 'query' }));
        const useTok = this.f('use_after_refresh') ? T1 : (T1b || T1);
        await this.http('private/get_mmp_status', { index_name: 'btc_usd' }, { mode: 'body', auth: { bearer: useTok.access_token } });
      }
    }
    const mainTok = T1b || T1;

    // ---------------- main: client_signature over WebSocket, session scope; token then omitted ----------------
    let wsSession = null, S = null, S2 = null, wsNonce = null;
    if (main) {
      wsSession = await this.ws();
      let ts = Date.now();
      if (this.f('sig_stale_timestamp')) ts -= 61000;
      if (this.f('sig_timestamp_seconds')) ts = Math.floor(ts / 1000);
      wsNonce = T.newNonce();
      const p = {
        grant_type: 'client_signature', client_id: main.client_id, timestamp: ts, nonce: wsNonce,
        signature: T.clientSignature(main.client_secret, ts, wsNonce, '', {
          upperHex: this.f('sig_uppercase_hex'), dropTrailingLf: this.f('sig_no_trailing_lf') }),
        scope: 'session:sdk-ws',
      };
      if (this.f('sig_secret_sent')) p.client_secret = main.client_secret;
      S = tok(await this.wsCall(wsSession, 'public/auth', p));
      if (!S && this.fault) { // recover after a seeded fault: sign again correctly
        const ts2 = Date.now(), n2 = T.newNonce();
        S = tok(await this.wsCall(wsSession, 'public/auth', { grant_type: 'client_signature', client_id: main.client_id,
          timestamp: ts2, nonce: n2, signature: T.clientSignature(main.client_secret, ts2, n2, ''), scope: 'session:sdk-ws' }));
      }
      const sess = S ? {} : (mainTok ? { access_token: mainTok.access_token } : {}); // fall back if auth failed
      const withTok = (extra) => Object.assign({}, extra, sess);
      await this.wsCall(wsSession, 'private/get_mmp_status', withTok({}),
        { mutate: this.f('env_id_string') ? (e) => { e.id = String(e.id); } : null });
      await this.wsCall(wsSession, 'private/get_mmp_status', withTok({ index_name: 'all' }));
      await this.wsCall(wsSession, 'private/get_mmp_status', withTok({ index_name: 'btc_usd', mmp_group: '' }));
      await this.wsCall(wsSession, 'private/get_mmp_status',
        withTok(this.f('mmp_group_without_index') ? { mmp_group: 'sdk-quotes' } : { index_name: 'btc_usd', mmp_group: 'sdk-quotes' }));
      await this.wsCall(wsSession, 'private/get_mmp_status', withTok({ block_rfq: this.f('mmp_block_rfq_string') ? 'true' : true }));
      await this.wsCall(wsSession, 'private/get_mmp_status', withTok({ index_name: this.f('mmp_index_response_only') ? 'sol_usdt' : 'sol_usdc' }));
      if (S) {
        // refresh of the session-scoped token (same session, no extra slot)
        S2 = tok(await this.wsCall(wsSession, 'public/auth', { grant_type: 'refresh_token', refresh_token: S.refresh_token }));
      }
    }
    const sessTok = S2 || S;

    // ---------------- fork of the session token; forked token used over WebSocket ----------------
    const fp = cfg.fork_token_params || {};
    if (sessTok && fp.refresh_token && fp.session_name) {
      const forkFrom = this.f('fork_connection_token') && mainTok ? mainTok : sessTok;
      const F = tok(await this.http('public/fork_token', {
        [fp.refresh_token]: forkFrom.refresh_token, [fp.session_name]: 'sdk-fork',
      }, { mode: 'query' }));
      if (F) {
        const wsFork = await this.ws();
        if (this.f('ws_token_outside_params')) {
          await this.wsCall(wsFork, 'private/get_mmp_status', { index_name: 'eth_usd' },
            { mutate: (e) => { e.access_token = F.access_token; } });
        } else {
          await this.wsCall(wsFork, 'private/get_mmp_status', { index_name: 'eth_usd', access_token: F.access_token });
        }
      }
    }

    // ---------------- read-only token: client_signature over HTTP (JSON body), with data ----------------
    let R = null;
    if (main) {
      const ts = Date.now();
      const nonce = this.f('sig_nonce_reused') && wsNonce ? wsNonce : T.newNonce();
      const data = 'sdk-readonly';
      R = tok(await this.http('public/auth', {
        grant_type: 'client_signature', client_id: main.client_id, timestamp: ts, nonce, data,
        signature: T.clientSignature(main.client_secret, ts, nonce, data), scope: 'account:read trade:read',
      }, { mode: 'body' }));
      if (!R && this.fault) { // recover after a seeded fault: sign again with a fresh nonce
        const ts2 = Date.now(), n2 = T.newNonce();
        R = tok(await this.http('public/auth', {
          grant_type: 'client_signature', client_id: main.client_id, timestamp: ts2, nonce: n2, data,
          signature: T.clientSignature(main.client_secret, ts2, n2, data), scope: 'account:read trade:read',
        }, { mode: 'body' }));
      }
    }
    const readTok = R || mainTok;

    // ---------------- walks ----------------
    if (readTok) {
      const key = { account: 'main', token: readTok.access_token };
      // 1. transaction log, HTTP GET query parameters, currency + time window
      let first = true, cont = null, pages = 0;
      const useSecs = this.f('tlog_timestamp_seconds');
      const start = now - 3 * 365 * 24 * 3600 * 1000, end = now; // the last three years
      for (;;) {
        const p = {
          currency: first && this.f('tlog_currency_lowercase') ? tlogCur.toLowerCase() : tlogCur,
          start_timestamp: useSecs ? Math.floor(start / 1000) : start,
          end_timestamp: useSecs ? Math.floor(end / 1000) : end,
          count: first && this.f('tlog_count_over_max') ? 251 : 50,
        };
        if (cont !== null && cont !== undefined) p.continuation = cont;
        await this.paceTxLog(key);
        const r = await this.http('private/get_transaction_log', p, { mode: 'query', auth: { bearer: readTok.access_token } });
        first = false; pages += 1;
        if (!ok(r) || !r.result || r.result.continuation === null || r.result.continuation === undefined || pages >= 40) break;
        cont = r.result.continuation;
      }
      // 2. transaction log over WebSocket: subaccount + keyword filter
      const wsRead = await this.ws();
      if (subId !== null) {
        cont = null; pages = 0;
        let afterNullDone = false;
        for (;;) {
          const p = { currency: tlogCur, subaccount_id: this.f('tlog_subaccount_string') ? String(subId) : subId, count: pageSize,
            access_token: readTok.access_token };
          if (cfg.transaction_log_keyword_param) p[cfg.transaction_log_keyword_param] = 'trade';
          if (cont !== null) p.continuation = (pages === 1 && this.f('tlog_continuation_string')) ? String(cont) : cont;
          if (afterNullDone) p.continuation = null;
          await this.paceTxLog(key);
          const r = await this.wsCall(wsRead, 'private/get_transaction_log', p);
          pages += 1;
          if (afterNullDone) break;
          if (!ok(r) || !r.result || pages >= 30) break;
          if (r.result.continuation === null || r.result.continuation === undefined) {
            if (this.f('tlog_continue_after_null')) { afterNullDone = true; continue; }
            break;
          }
          cont = r.result.continuation;
        }
      }
      // 3. trigger order history, HTTP GET with JSON-RPC body
      cont = null; pages = 0;
      for (;;) {
        const p = { currency: this.f('trig_currency_outside_enum') ? 'STETH' : trigCur, count: pages === 0 && this.f('trig_count_over_max') ? 1001 : pageSize };
        if (inst) p.instrument_name = inst;
        if (cont !== null) {
          p.continuation = cont;
          if (pages === 1 && this.f('trig_continuation_integer')) {
            const n = Number(cont);
            p.continuation = Number.isFinite(n) ? n : Number(String(cont).replace(/\D/g, '') || '1');
          }
        }
        const r = await this.http('private/get_trigger_order_history', p, {
          mode: 'body', auth: { bearer: readTok.access_token },
          httpMethod: pages === 0 && this.f('http_post_not_get') ? 'POST' : 'GET' });
        pages += 1;
        if (!ok(r) || !r.result || pages >= 30) break;
        const c = r.result.continuation;
        if (c === null || c === undefined || c === '' || c === 'none' || !Array.isArray(r.result.entries) || r.result.entries.length === 0) break;
        cont = c;
      }
      // 4. poll the newest transaction-log entry, kept to the configured rate
      // as many polls as the bucket still holds, plus two: the last ones must wait for the rate
      const polls = Math.min(Math.floor(this.bucketTokens(key)) + 2, 300);
      const unpaced = this.f('tlog_rate_unpaced');
      for (let i = 0; i < polls; i++) {
        if (!unpaced) await this.paceTxLog(key);
        const r = await this.http('private/get_transaction_log', { currency: tlogCur, count: 1 }, { mode: 'query', auth: { bearer: readTok.access_token } });
        if (!ok(r) && !unpaced) break;
      }

      // ---------------- exchange for the subaccount ----------------
      if (R && subId !== null) {
        const X = tok(await this.wsCall(wsRead, 'public/exchange_token', {
          refresh_token: R.refresh_token,
          subject_id: this.f('exchange_subject_string') ? String(subId) : subId,
          scope: this.f('exchange_scope_exceeds') ? 'account:read_write' : 'account:read',
        }));
        if (X) {
          await this.paceTxLog({ account: 'sub', token: X.access_token });
          await this.http('private/get_transaction_log', { currency: tlogCur, count: pageSize }, { mode: 'query', auth: { bearer: X.access_token } });
        }
      }
    }

    // ---------------- HTTP alternatives: Basic and signed header ----------------
    if (main) {
      await this.http('private/get_trigger_order_history', { currency: trigCur, count: 1 },
        { mode: 'query', auth: { basic: main, opts: { noBase64: this.f('basic_not_base64') } } });
      await this.http('private/get_mmp_status', { index_name: 'btc_usd', block_rfq: false },
        { mode: 'query', auth: { signed: main, opts: { uriNoQuery: this.f('signed_uri_without_query'), tsSeconds: this.f('signed_timestamp_seconds') } } });
      await this.http('private/get_trigger_order_history', { currency: trigCur, count: 2 },
        { mode: 'body', auth: { signed: main, opts: { bodyUnsigned: this.f('signed_body_unsigned') } } });
    }

    // ---------------- sub account, toggle_subaccount_login by main ----------------
    let wsSub = null, U = null, U2 = null;
    if (sub) {
      wsSub = await this.ws();
      U = tok(await this.wsCall(wsSub, 'public/auth', { grant_type: 'client_credentials', client_id: sub.client_id, client_secret: sub.client_secret }));
      if (U) {
        if (this.f('ws_omit_connection_token')) await this.wsCall(wsSub, 'private/get_mmp_status', {});
        else await this.wsCall(wsSub, 'private/get_mmp_status', { access_token: U.access_token });
      }
    }
    if (main && mainTok && subId !== null) {
      const toggler = this.f('toggle_readonly_scope') && R ? R : mainTok;
      await this.http('private/toggle_subaccount_login', {
        sid: this.f('toggle_sid_string') ? String(subId) : subId,
        state: this.f('toggle_state_enum') ? 'disabled' : 'disable',
      }, { mode: 'body', auth: { bearer: toggler.access_token } });
      await this.http('private/toggle_subaccount_login', { sid: subId, state: 'enable' },
        { mode: 'body', auth: { bearer: mainTok.access_token } });
      if (sub) {
        // the disable ended the subaccount's session: log in again
        if (!wsSub || wsSub.closed) wsSub = await this.ws();
        U2 = tok(await this.wsCall(wsSub, 'public/auth', { grant_type: 'client_credentials', client_id: sub.client_id, client_secret: sub.client_secret }));
        const useU = this.f('use_after_disable') && U ? U : U2;
        if (useU) {
          // over HTTP, so that the connection's fresh authentication cannot stand in for the token
          await this.http('private/get_mmp_status', {}, { mode: 'query', auth: { bearer: useU.access_token } });
        }
      }
    }
    const subTok = U2 || U;

    // ---------------- two_factor account toggles its subaccount, with the second factor ----------------
    if (tfa && tfaSubId !== null) {
      const wsTfa = await this.ws();
      const Z = tok(await this.wsCall(wsTfa, 'public/auth', { grant_type: 'client_credentials', client_id: tfa.client_id, client_secret: tfa.client_secret }));
      if (Z) {
        const sf = tfa.second_factor || null;
        const p1 = { sid: tfaSubId, state: 'disable', access_token: Z.access_token };
        let lastCode = null;
        if (sf && sf.parameter && sf.totp_secret && !this.f('toggle_without_2fa')) { lastCode = T.totp(sf.totp_secret); p1[sf.parameter] = lastCode; }
        await this.wsCall(wsTfa, 'private/toggle_subaccount_login', p1);
        const p2 = { sid: tfaSubId, state: 'enable', access_token: Z.access_token };
        if (sf && sf.parameter && sf.totp_secret) p2[sf.parameter] = T.totp(sf.totp_secret);
        await this.wsCall(wsTfa, 'private/toggle_subaccount_login', p2);
      }
    }

    // ---------------- a short-lived token: expiry, then refresh ----------------
    if (main) {
      const E = tok(await this.http('public/auth', { grant_type: 'client_credentials', client_id: main.client_id,
        client_secret: main.client_secret, scope: 'expires:2' }, { mode: 'query' }));
      if (E && Number(E.expires_in) <= 5) {
        await this.http('private/get_mmp_status', {}, { mode: 'query', auth: { bearer: E.access_token } });
        await sleep(Number(E.expires_in) * 1000 + 1200);
        const E2 = tok(await this.http('public/auth', { grant_type: 'refresh_token', refresh_token: E.refresh_token }, { mode: 'query' }));
        const use = this.f('use_after_expiry') ? E : E2;
        if (use) await this.http('private/get_mmp_status', {}, { mode: 'query', auth: { bearer: use.access_token } });
      }
    }

    // ---------------- delete_member ----------------
    if (mainTok && Number.isInteger(cfg.member_id)) {
      const who = this.f('delete_member_subaccount') && subTok ? subTok : mainTok;
      await this.http('private/delete_member', { member_id: this.f('delete_member_zero') ? 0 : cfg.member_id },
        { mode: 'body', auth: { bearer: who.access_token } });
    }

    // ---------------- close_position on the session WebSocket (token remembered) ----------------
    const positions = Array.isArray(cfg.positions) ? cfg.positions : [];
    if (wsSession && positions.length) {
      const closeInst = inst && positions.includes(inst) ? inst : positions[0];
      const sess = S ? {} : (mainTok ? { access_token: mainTok.access_token } : {});
      const p = Object.assign({ instrument_name: closeInst }, sess);
      if (closeInst === inst && markPrice !== null) {
        p.type = this.f('close_type_enum') ? 'stop_limit' : 'limit';
        p.price = this.f('close_price_string') ? String(markPrice) : markPrice;
      } else {
        p.type = this.f('close_type_enum') ? 'stop_limit' : 'market';
        if (this.fault === 'close_price_string') { p.type = 'limit'; p.price = '1'; }
      }
      await this.wsCall(wsSession, 'private/close_position', p);
    }

    // ---------------- Direct Access lock_portfolio ----------------
    if (cfg.direct_access_url && cfg.direct_access_key) {
      let url = `${cfg.direct_access_url.replace(/\/+$/, '')}/api/v2/private/lock_portfolio`;
      if (this.f('lock_on_base_url')) url = `${cfg.base_url.replace(/\/+$/, '')}/private/lock_portfolio`;
      const bearer = this.f('lock_with_oauth_token') && mainTok ? mainTok.access_token : cfg.direct_access_key;
      const m = this.f('lock_post') ? 'POST' : 'GET';
      await this._httpSend('lock_portfolio', m === 'GET' ? 'rest-get' : 'rest-post', url,
        { method: m, headers: { Authorization: `Bearer ${bearer}` } });
    }

    // ---------------- logout at the end (WebSocket only) ----------------
    if (wsSession && sessTok) {
      if (this.f('logout_over_http')) {
        await this.http('private/logout', {}, { mode: 'query', auth: { bearer: sessTok.access_token } });
      } else {
        await this.wsCall(wsSession, 'private/logout', {});
      }
      if (this.f('use_after_logout')) {
        await this.http('private/get_mmp_status', {}, { mode: 'query', auth: { bearer: sessTok.access_token } });
      }
    }
    this.closeAll();
  }
}

module.exports = { Session };
