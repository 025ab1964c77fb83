"""Drives the public ccxt library's `deribit` exchange against `harness judge`.

The REST side uses ccxt's own request signing (the `deri-hmac-sha256` signed header,
SPEC.md 5.6) through its implicit API methods and a unified method; the WebSocket side uses
ccxt.pro's `authenticate` (a `client_signature` `public/auth`, SPEC.md 5.5), and ccxt's
asyncio client makes thirty private calls at once. Transaction
log and trigger history are walked the way a ccxt user has to for these endpoints: ccxt has
no pager for them, so the caller hands the continuation back.

Usage: judge_ccxt.py TARGET_FILE. Prints one line per call; the judge writes the verdicts.
"""

import asyncio
import sys
import tomllib

import ccxt
import ccxt.async_support
import ccxt.pro


def call(log, name, function, *args):
    try:
        result = function(*args)
        log.append(f"ok    {name}")
        return result
    except Exception as error:  # the judge's answers are part of what is observed
        log.append(f"error {name}: {type(error).__name__}: {str(error)[:200]}")
        return None


def walk(log, name, function, params, items):
    pages = entries = 0
    while True:
        page = call(log, f"{name} page {pages + 1}", function, params)
        if page is None:
            break
        result = page["result"]
        pages += 1
        entries += len(result[items])
        continuation = result.get("continuation")
        if continuation in (None, ""):
            break
        params = {**params, "continuation": continuation}
    log.append(f"      {name}: {pages} pages, {entries} entries")


def rest(target, log):
    main = target["accounts"]["main"]
    exchange = ccxt.deribit({"apiKey": main["client_id"], "secret": main["client_secret"]})
    exchange.urls["api"] = {"rest": target["base_url"].removesuffix("/api/v2")}
    sub = target["fixtures"]["subaccount_id"]
    call(log, "public/get_currencies", exchange.public_get_get_currencies)
    call(log, "fetch_currencies (unified)", exchange.fetch_currencies)
    call(log, "public/get_historical_volatility", exchange.public_get_get_historical_volatility, {"currency": "BTC"})
    call(log, "public/get_book_summary_by_instrument", exchange.public_get_get_book_summary_by_instrument, {"instrument_name": "BTC-PERPETUAL"})
    call(log, "private/get_mmp_status", exchange.private_get_get_mmp_status, {"index_name": "btc_usd"})
    call(log, "private/get_mmp_status (all)", exchange.private_get_get_mmp_status)
    walk(log, "private/get_transaction_log", exchange.private_get_get_transaction_log, {"currency": "BTC", "count": 25}, "logs")
    walk(log, "private/get_trigger_order_history", exchange.private_get_get_trigger_order_history, {"currency": "BTC", "count": 10}, "entries")
    call(log, "private/toggle_subaccount_login", exchange.private_get_toggle_subaccount_login, {"sid": sub, "state": "enable"})


async def concurrent(target, log):
    """Thirty private calls at once from ccxt's asyncio client, as a bot fetching several
    things in parallel does (rate limiting off, as many bots run it). ccxt's deribit nonce
    is the millisecond timestamp, so calls signed in the same millisecond share it: thirty
    make that certain where five saw it in five runs of six."""
    main = target["accounts"]["main"]
    exchange = ccxt.async_support.deribit(
        {"apiKey": main["client_id"], "secret": main["client_secret"], "enableRateLimit": False}
    )
    exchange.urls["api"] = {"rest": target["base_url"].removesuffix("/api/v2")}
    try:
        calls = [exchange.private_get_get_mmp_status({"index_name": "btc_usd"}) for _ in range(30)]
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        for number, outcome in enumerate(outcomes, 1):
            if isinstance(outcome, Exception):
                log.append(f"error concurrent private/get_mmp_status {number}: {type(outcome).__name__}: {str(outcome)[:160]}")
            else:
                log.append(f"ok    concurrent private/get_mmp_status {number}")
    finally:
        await exchange.close()


async def ws(target, log):
    main = target["accounts"]["main"]
    exchange = ccxt.pro.deribit({"apiKey": main["client_id"], "secret": main["client_secret"]})
    exchange.urls["api"]["ws"] = target["ws_url"]
    try:
        for attempt in (1, 2):
            try:
                await asyncio.wait_for(exchange.authenticate(), 10)
                log.append(f"ok    ws public/auth client_signature (attempt {attempt})")
            except Exception as error:
                log.append(f"error ws public/auth client_signature (attempt {attempt}): {type(error).__name__}: {str(error)[:200]}")
            # ccxt.pro caches the authentication per connection; a second connection signs afresh.
            await exchange.close()
    finally:
        await exchange.close()


def main():
    with open(sys.argv[1], "rb") as file:
        target = tomllib.load(file)
    log = []
    rest(target, log)
    asyncio.run(concurrent(target, log))
    asyncio.run(ws(target, log))
    print(f"ccxt {ccxt.__version__} against {target['base_url']}")
    print("\n".join(log))


if __name__ == "__main__":
    main()
