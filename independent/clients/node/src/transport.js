'use strict';
// Transports: HTTP GET (query parameters or JSON-RPC body), a small RFC 6455 WebSocket client,
// authorization headers (Bearer, Basic, signed), the client signature, and TOTP.
const http = require('http');
const https = require('https');
const crypto = require('crypto');
const { URL } = require('url');

let nextId = 1;
function newId() { return nextId++; }

function hmacHex(secret, text) {
  return crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(text, 'utf8')).digest('hex');
}
function newNonce() { return crypto.randomBytes(8).toString('hex'); }

// SPEC 5.5: timestamp LF nonce LF data   (data empty when omitted; still ends with LF)
function clientSignature(secret, timestamp, nonce, data, opts = {}) {
  let text = `${timestamp}\n${nonce}\n${data || ''}`;
  if (opts.dropTrailingLf && !data) text = `${timestamp}\n${nonce}`;
  let sig = hmacHex(secret, text);
  if (opts.upperHex) sig = sig.toUpperCase();
  return sig;
}

// SPEC 5.6: signed HTTP header
function signedHeader(scheme, clientId, secret, httpMethod, requestUri, body, opts = {}) {
  const ts = opts.tsSeconds ? Math.floor(Date.now() / 1000) : Date.now();
  const nonce = newNonce();
  const method = httpMethod.toUpperCase();
  const uri = opts.uriNoQuery ? requestUri.split('?')[0] : requestUri;
  const signedBody = opts.bodyUnsigned ? '' : (body || '');
  const requestData = `${method}\n${uri}\n${signedBody}\n`;
  const sig = hmacHex(secret, `${ts}\n${nonce}\n${requestData}`);
  return `${scheme} id=${clientId},ts=${ts},nonce=${nonce},sig=${sig}`;
}

function basicHeader(clientId, secret, opts = {}) {
  const raw = `${clientId}:${secret}`;
  return 'Basic ' + (opts.noBase64 ? raw : Buffer.from(raw, 'utf8').toString('base64'));
}

// RFC 6238 TOTP, SHA-1, 30 s, 6 digits
function base32Decode(s) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const clean = s.replace(/=+$/, '').replace(/\s+/g, '').toUpperCase();
  let bits = 0, value = 0; const out = [];
  for (const ch of clean) {
    const idx = alphabet.indexOf(ch);
    if (idx < 0) continue;
    value = (value << 5) | idx; bits += 5;
    if (bits >= 8) { out.push((value >>> (bits - 8)) & 0xff); bits -= 8; }
  }
  return Buffer.from(out);
}
function totp(secretB32, timeMs = Date.now()) {
  const counter = Math.floor(timeMs / 1000 / 30);
  const buf = Buffer.alloc(8);
  buf.writeUInt32BE(Math.floor(counter / 0x100000000), 0);
  buf.writeUInt32BE(counter >>> 0, 4);
  const h = crypto.createHmac('sha1', base32Decode(secretB32)).update(buf).digest();
  const off = h[h.length - 1] & 0x0f;
  const code = ((h[off] & 0x7f) << 24) | (h[off + 1] << 16) | (h[off + 2] << 8) | h[off + 3];
  return String(code % 1000000).padStart(6, '0');
}

class Unreachable extends Error {}

function isUnreachable(err) {
  return err && ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNRESET'].includes(err.code);
}

// Raw HTTP request; resolves {status, body(text)}.
function httpRequest(urlStr, { method = 'GET', headers = {}, body = null, timeoutMs = 8000 } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(urlStr);
    const lib = u.protocol === 'https:' ? https : http;
    const h = Object.assign({ Accept: 'application/json' }, headers);
    let payload = null;
    if (body !== null && body !== undefined) {
      payload = Buffer.from(body, 'utf8');
      h['Content-Type'] = 'application/json';
      h['Content-Length'] = payload.length;
    }
    const req = lib.request({
      protocol: u.protocol, hostname: u.hostname, port: u.port, path: u.pathname + u.search,
      method, headers: h,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

// ---------------- WebSocket (RFC 6455, masked client frames) ----------------
class WebSocketClient {
  constructor(socket, head) {
    this.socket = socket;
    this.buf = head && head.length ? Buffer.from(head) : Buffer.alloc(0);
    this.fragments = [];
    this.pending = new Map();
    this.closed = false;
    socket.on('data', (d) => { this.buf = Buffer.concat([this.buf, d]); this._parse(); });
    socket.on('close', () => this._fail('closed'));
    socket.on('error', () => this._fail('socket error'));
    if (this.buf.length) setImmediate(() => this._parse());
  }

  static connect(urlStr, timeoutMs = 8000) {
    return new Promise((resolve, reject) => {
      const u = new URL(urlStr);
      const lib = u.protocol === 'wss:' ? https : http;
      const key = crypto.randomBytes(16).toString('base64');
      const req = lib.request({
        protocol: u.protocol === 'wss:' ? 'https:' : 'http:', hostname: u.hostname, port: u.port,
        path: u.pathname + u.search, method: 'GET',
        headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': key },
      });
      req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
      req.on('upgrade', (res, socket, head) => {
        const expect = crypto.createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
        if (res.headers['sec-websocket-accept'] !== expect) { socket.destroy(); reject(new Error('bad Sec-WebSocket-Accept')); return; }
        socket.setTimeout(0);
        socket.setNoDelay(true);
        resolve(new WebSocketClient(socket, head));
      });
      req.on('response', (res) => { res.resume(); reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)); });
      req.on('error', reject);
      req.end();
    });
  }

  _fail(why) {
    if (this.closed) return;
    this.closed = true;
    for (const [, p] of this.pending) p.resolve({ __transportError: why });
    this.pending.clear();
  }

  _sendFrame(opcode, payload) {
    if (this.closed) return;
    const len = payload.length;
    let header;
    if (len < 126) { header = Buffer.alloc(2); header[1] = 0x80 | len; }
    else if (len < 65536) { header = Buffer.alloc(4); header[1] = 0x80 | 126; header.writeUInt16BE(len, 2); }
    else { header = Buffer.alloc(10); header[1] = 0x80 | 127; header.writeUInt32BE(Math.floor(len / 0x100000000), 2); header.writeUInt32BE(len >>> 0, 6); }
    header[0] = 0x80 | opcode;
    const mask = crypto.randomBytes(4);
    const masked = Buffer.alloc(len);
    for (let i = 0; i < len; i++) masked[i] = payload[i] ^ mask[i & 3];
    this.socket.write(Buffer.concat([header, mask, masked]));
  }

  _parse() {
    for (;;) {
      if (this.buf.length < 2) return;
      const b0 = this.buf[0], b1 = this.buf[1];
      const fin = (b0 & 0x80) !== 0, opcode = b0 & 0x0f, masked = (b1 & 0x80) !== 0;
      let len = b1 & 0x7f, off = 2;
      if (len === 126) { if (this.buf.length < 4) return; len = this.buf.readUInt16BE(2); off = 4; }
      else if (len === 127) { if (this.buf.length < 10) return; len = this.buf.readUInt32BE(2) * 0x100000000 + this.buf.readUInt32BE(6); off = 10; }
      let mask = null;
      if (masked) { if (this.buf.length < off + 4) return; mask = this.buf.subarray(off, off + 4); off += 4; }
      if (this.buf.length < off + len) return;
      let payload = Buffer.from(this.buf.subarray(off, off + len));
      this.buf = this.buf.subarray(off + len);
      if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
      if (opcode === 0x8) { // close
        if (!this.closed) { try { this._sendFrame(0x8, payload.subarray(0, 2)); } catch (e) { /* ignore */ } }
        this._fail('closed by server'); this.socket.end(); return;
      } else if (opcode === 0x9) { this._sendFrame(0xA, payload); }
      else if (opcode === 0xA) { /* pong */ }
      else if (opcode === 0x0 || opcode === 0x1 || opcode === 0x2) {
        this.fragments.push(payload);
        if (fin) {
          const text = Buffer.concat(this.fragments).toString('utf8');
          this.fragments = [];
          this._onMessage(text);
        }
      }
    }
  }

  _onMessage(text) {
    let msg;
    try { msg = JSON.parse(text); } catch (e) { return; }
    if (msg && msg.id !== undefined && msg.id !== null && this.pending.has(String(msg.id))) {
      const p = this.pending.get(String(msg.id));
      this.pending.delete(String(msg.id));
      p.resolve(msg);
    } else if (msg && (msg.id === null || msg.id === undefined) && msg.error && this.pending.size === 1) {
      // an error the server could not tie to an id: give it to the only waiting request
      const [k, p] = [...this.pending][0];
      this.pending.delete(k);
      p.resolve(msg);
    }
    // notifications (no id) are ignored: the session subscribes to nothing
  }

  // Send one JSON-RPC message (already built) and wait for the response with its id.
  request(envelope, timeoutMs = 8000) {
    return new Promise((resolve) => {
      if (this.closed) { resolve({ __transportError: 'closed' }); return; }
      const key = String(envelope.id);
      const timer = setTimeout(() => { this.pending.delete(key); resolve({ __transportError: 'timeout' }); }, timeoutMs);
      this.pending.set(key, { resolve: (m) => { clearTimeout(timer); resolve(m); } });
      this._sendFrame(0x1, Buffer.from(JSON.stringify(envelope), 'utf8'));
    });
  }

  close() {
    if (this.closed) return;
    try { this._sendFrame(0x8, Buffer.from([0x03, 0xe8])); } catch (e) { /* ignore */ }
    this.closed = true;
    setTimeout(() => this.socket.destroy(), 200).unref();
  }
}

module.exports = {
  newId, hmacHex, newNonce, clientSignature, signedHeader, basicHeader, totp, httpRequest,
  WebSocketClient, Unreachable, isUnreachable,
};
