"""Drives the public deribridge library against `harness judge`.

deribridge speaks WebSocket only. Its `DeribitWebSocketClient` logs in on connect with
`client_credentials` (a connection-scoped token: no `session:` scope), keeps the token to
itself and sends every private call without `params.access_token`; it also offers a
`client_signature` login (`authenticate_with_signature`, a uuid4 nonce). The session:
public calls, private calls one at a time and five at once, a transaction-log walk the way
a deribridge user writes it (the library has no pager), and a signature login.

Usage: judge_deribridge.py TARGET_FILE. Prints one line per call; the judge writes the
verdicts.
"""

import asyncio
import logging
import sys
import time
import tomllib

import deribridge
from deribridge import DeribitWebSocketClient


async def call(log, name, coroutine):
    try:
        result = await asyncio.wait_for(coroutine, 15)
        log.append(f"ok    {name}")
        return result
    except Exception as error:  # the judge's answers are part of what is observed
        log.append(f"error {name}: {type(error).__name__}: {str(error)[:200]}")
        return None


async def walk(log, client):
    """Pages through the BTC transaction log, handing each continuation back."""
    pages = entries = 0
    continuation = None
    end = int(time.time() * 1000)
    while pages < 50:
        page = await call(
            log,
            f"private/get_transaction_log page {pages + 1}",
            client.get_transaction_log("BTC", 0, end, count=50, continuation=continuation),
        )
        if page is None:
            break
        pages += 1
        entries += len(page["logs"])
        continuation = page.get("continuation")
        if continuation is None:
            break
    log.append(f"      private/get_transaction_log: {pages} pages, {entries} entries")


async def session(target, log):
    main = target["accounts"]["main"]
    client = DeribitWebSocketClient(client_id=main["client_id"], client_secret=main["client_secret"])
    client.ws_url = target["ws_url"]
    try:
        await asyncio.wait_for(client.connect(), 15)
        log.append(f"{'ok   ' if client.authenticated else 'error'} connect and public/auth client_credentials")
        await call(log, "public/get_historical_volatility", client.get_historical_volatility("BTC"))
        await call(log, "public/get_book_summary_by_instrument", client.get_book_summary_by_instrument("BTC-PERPETUAL"))
        await call(log, "private/get_mmp_status", client.send_request("private/get_mmp_status", {"index_name": "btc_usd"}, auth_required=True))
        outcomes = await asyncio.gather(
            *(client.send_request("private/get_mmp_status", {}, auth_required=True) for _ in range(5)),
            return_exceptions=True,
        )
        for number, outcome in enumerate(outcomes, 1):
            if isinstance(outcome, Exception):
                log.append(f"error concurrent private/get_mmp_status {number}: {type(outcome).__name__}: {str(outcome)[:160]}")
            else:
                log.append(f"ok    concurrent private/get_mmp_status {number}")
        await walk(log, client)
        await call(log, "public/auth client_signature", client.authenticate_with_signature("judge"))
        await call(log, "private/get_mmp_status after the signature login", client.send_request("private/get_mmp_status", {}, auth_required=True))
    finally:
        await client.close()


def main():
    logging.disable(logging.CRITICAL)  # deribridge logs every refusal; the lines below say it once
    with open(sys.argv[1], "rb") as file:
        target = tomllib.load(file)
    log = []
    asyncio.run(session(target, log))
    print(f"deribridge {deribridge.__version__} against {target['ws_url']}")
    print("\n".join(log))


if __name__ == "__main__":
    main()
