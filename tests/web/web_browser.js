// web_browser.js - the browser half of web_browser.sh: MODE (view|set) URL ARTIFACTS SIGPID.
'use strict';
const {chromium} = require('playwright-core');
const [mode, url, art, sigpid] = process.argv.slice(2);

function check(ok, what) {
  if (!ok) throw new Error(what);
}

async function waitData(page, trace) {
  await page.waitForFunction(t => {
    const e = document.querySelector(`.plot.active .stats span[data-trace="${t}"]`);
    return e && isFinite(+e.dataset.min);
  }, trace, {timeout: 20000});
}

async function plotted(page, trace) {
  return page.$eval(`.plot.active .stats span[data-trace="${trace}"]`,
    s => [+s.dataset.min, +s.dataset.max]);
}

async function arm(page) {
  const env = process.env;
  const want = {'arm.state': [env.PLANT, [env.CTRL, env.MON]], 'arm.ref': [env.TRAJ, [env.CTRL,
    env.MON]], 'arm.cmd': [env.CTRL, [env.PLANT]]};
  for (const [conn, [w, readers]] of Object.entries(want)) {
    const row = page.locator(`tr[data-conn="${conn}"]`);
    await row.waitFor({timeout: 10000});
    const group = await row.locator('xpath=ancestor::details/summary').textContent();
    check(group.includes(`(${w})`), `${conn} is not under its writer ${w}: ${group}`);
    const rd = await row.locator('.readers').textContent();
    for (const r of readers) check(rd.includes(`(${r})`), `${conn}: reader ${r} missing: ${rd}`);
    await page.waitForFunction(c => /Hz/.test(document.querySelector(
      `tr[data-conn="${c}"] .rate`).textContent), conn, {timeout: 10000});
    check(!(await row.getAttribute('class')).includes('stale'), `${conn} marked stale`);
  }
  // The graph: the same 8 edges as ard graph draws (tests/tools/ard_graph_arm.sh).
  const want8 = [`p${env.PLANT} c:arm.state`, `c:arm.state p${env.CTRL}`, `c:arm.state p${env.MON}`,
    `p${env.TRAJ} c:arm.ref`, `c:arm.ref p${env.CTRL}`, `c:arm.ref p${env.MON}`,
    `p${env.CTRL} c:arm.cmd`, `c:arm.cmd p${env.PLANT}`].sort();
  const got = (await page.$$eval('#graph path.edge', es => es.map(e => e.dataset.edge))).sort();
  check(JSON.stringify(got) === JSON.stringify(want8), `graph edges: ${got.join(', ')}`);
  check(await page.locator('#graph g.proc').count() === 4, 'graph: 4 processes');
  await page.locator('#graph g.conn[data-node="c:arm.state"]').click();
  await page.locator('.plot.active input[data-field="q[0]"]').waitFor({timeout: 10000});
  for (const f of ['q[1]', 'q[2]', 'qd[0]'])
    await page.locator(`.plot.active input[data-field="${f}"]`).check();
  await page.locator('.plot.active select.window').selectOption('10');
  await page.waitForFunction(() => document.querySelector('.plot.active').dataset.plotted ===
    'q[0] q[1] q[2] qd[0]', null, {timeout: 5000});
  await page.waitForTimeout(4000);
  const traces = await page.locator('.plot.active .stats span').count();
  check(traces === 4, `4 traces in one plot, found ${traces}`);
  for (const f of ['q[0]', 'q[1]', 'q[2]', 'qd[0]']) {
    const [lo, hi] = await plotted(page, f);
    check(isFinite(lo) && isFinite(hi) && hi > lo, `arm.state ${f}: ${lo} .. ${hi}`);
  }
  await page.mouse.move(1200, 300);
  await page.waitForTimeout(300);
  await page.screenshot({path: `${art}/web_arm.png`});
}

async function many(page) {
  await page.locator('tr[data-conn="many.g0.c100"]').waitFor({timeout: 10000});
  check(await page.locator('#graph svg').count() === 0, 'a graph of 103 connections is drawn');
  const rows = await page.locator('#netlist tr.conn').count();
  check(rows === 103, `expected 103 rows, found ${rows}`);
  await scrollsInPane(page, '1400x900');
  await page.fill('#filter', 'g3');
  await page.waitForTimeout(200);
  const n = await page.locator('#netlist tr.conn').count();
  check(n === 20, `filter g3: ${n} rows`);
  await page.fill('#filter', '');
  await page.waitForTimeout(1200);
  await page.screenshot({path: `${art}/web_many.png`});
  // The pane does not rely on the fonts' or the window's measures: a smaller window and larger
  // text (other fonts make the header, bar and legend taller) keep it in the window too.
  await page.setViewportSize({width: 1000, height: 600});
  await page.evaluate(() => { // through the CSSOM: the page's policy refuses inline styles
    document.body.style.fontSize = '17px';
    document.body.style.lineHeight = '1.6';
  });
  await page.waitForTimeout(300);
  await scrollsInPane(page, '1000x600, 17px text');
}

// The list is taller than its pane, the pane ends inside the window (the page does not grow
// with the list), and the list's last row, scrolled to, shows inside the pane.
async function scrollsInPane(page, where) {
  const [sh, ch, doc, vh, last, pane] = await page.evaluate(() => {
    const l = document.getElementById('netlist');
    const rows = l.querySelectorAll('tr.conn');
    l.scrollTop = l.scrollHeight;
    return [l.scrollHeight, l.clientHeight,
      document.getElementById('net').getBoundingClientRect().bottom, window.innerHeight,
      rows[rows.length - 1].getBoundingClientRect().bottom, l.getBoundingClientRect().bottom];
  });
  check(sh > ch && doc <= vh,
    `${where}: the list does not scroll in its pane: ${[sh, ch, doc, vh]}`);
  check(last <= pane + 0.5 && last > pane - ch,
    `${where}: the last row, scrolled to, is not in the pane: ${last} (pane ${pane - ch}..${pane})`);
  await page.evaluate(() => { document.getElementById('netlist').scrollTop = 0; });
}

async function main() {
  const browser = await chromium.launch({executablePath: process.env.CHROMIUM,
    args: ['--no-sandbox']});
  const page = await browser.newPage({viewport: {width: 1400, height: 900}});
  const errors = [];
  page.on('pageerror', e => errors.push(String(e)));
  const resp = await page.goto(url);
  // The token of the printed address went into an HttpOnly cookie and out of the address bar;
  // the page's policy lets it connect to its own origin only.
  check(!page.url().includes('token='), `the token stayed in the address: ${page.url()}`);
  check(await page.evaluate(() => document.cookie) === '', 'the token cookie is not HttpOnly');
  const csp = resp.headers()['content-security-policy'] || '';
  check(/connect-src 'self'(;|$)/.test(csp), `CSP: ${csp}`);
  if (mode === 'arm' || mode === 'many') {
    await (mode === 'arm' ? arm(page) : many(page));
    check(errors.length === 0, `errors on the page: ${errors.join('; ')}`);
    await browser.close();
    return;
  }
  // The net shows the connection, its writer (ard siggen's pid) and its rate.
  const row = page.locator('tr[data-conn="sig"]');
  await row.waitFor({timeout: 10000});
  const group = await row.locator('xpath=ancestor::details/summary').textContent();
  check(group.includes(`(${sigpid})`), `sig is not under its writer ${sigpid}: ${group}`);
  await page.waitForFunction(() =>
    /kHz/.test(document.querySelector('tr[data-conn="sig"] .rate').textContent), null,
    {timeout: 10000});
  check(!(await row.getAttribute('class')).includes('stale'), 'a live 10 kHz sine marked stale');
  check((await page.locator('tr[data-conn="quiet"]').getAttribute('class')).includes('stale'),
    'a connection without writer is not marked stale');

  // Plot s over 1 s: its extremes are the sine's, 0.5 +- 3.
  await row.click();
  const plot = page.locator('.plot.active');
  await page.locator('.plot.active input[data-field="s"]').waitFor({timeout: 10000});
  await page.locator('.plot.active input[data-field="s"]').check();
  await page.locator('.plot.active input[data-field="t"]').uncheck();
  await page.waitForFunction(() => document.querySelector('.plot.active').dataset.plotted === 's',
    null, {timeout: 5000});
  await plot.locator('select.window').selectOption('1');
  // Data of the new subscription on the plot, then a whole window of it.
  await waitData(page, 's');
  await page.waitForTimeout(1500);
  const [lo, hi] = await plotted(page, 's');
  console.log(`plotted s: ${lo} .. ${hi} (sine 0.5 +- 3)`);
  check(Math.abs(lo - -2.5) < 0.06 && Math.abs(hi - 3.5) < 0.06,
    `plotted extremes ${lo} .. ${hi}, expected -2.5 .. 3.5 within 0.06`);
  check(/ard web \(\d+\)/.test(await row.locator('.readers').textContent()),
    'the server is not shown among the readers of what it plots');
  // Autoscale: the range is the data's with 5 % margins; fixed: exactly the one given.
  const ylo = +(await plot.getAttribute('data-ylo')), yhi = +(await plot.getAttribute('data-yhi'));
  check(Math.abs(ylo - (-2.5 - 0.3)) < 0.1 && Math.abs(yhi - (3.5 + 0.3)) < 0.1,
    `autoscale range ${ylo} .. ${yhi}`);
  await plot.locator('input.auto').uncheck();
  await plot.locator('input.ymin').fill('-10');
  await plot.locator('input.ymax').fill('10');
  await plot.locator('input.ymax').press('Enter');
  await page.waitForFunction(() => document.querySelector('.plot.active').dataset.ylo === '-10' &&
    document.querySelector('.plot.active').dataset.yhi === '10', null, {timeout: 5000});
  await page.screenshot({path: `${art}/web_fixed.png`});
  await plot.locator('input.auto').check();
  const val = await plot.locator('pre.value').textContent();
  check(/^seq \d+/.test(val) && /\ns = -?\d/.test(val), `decoded value missing: ${val}`);
  // Cursor readout: time and the value under it.
  const box = await plot.locator('canvas').boundingBox();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
  await page.waitForTimeout(200);
  const ro = await plot.locator('.readout').textContent();
  check(/^t = -0\.\d+ s {3}s = /.test(ro), `cursor readout: ${ro}`);
  await page.screenshot({path: `${art}/web_scope.png`});

  // Pause: the plot stops (same right edge, same pixels); resume: it moves on.
  await plot.locator('button.pause').click();
  await page.waitForTimeout(300);
  const t1 = await plot.getAttribute('data-t1');
  const img = await plot.locator('canvas').screenshot();
  await page.waitForTimeout(1500);
  check(await plot.getAttribute('data-t1') === t1, 'the time axis moved while paused');
  check(Buffer.compare(img, await plot.locator('canvas').screenshot()) === 0,
    'the plot changed while paused');
  await page.screenshot({path: `${art}/web_paused.png`});
  await plot.locator('button.pause').click();
  await page.waitForTimeout(500);
  check(+(await plot.getAttribute('data-t1')) > +t1 + 0.3, 'resume did not move the plot on');

  // A second plot of another field, fixed scale.
  await page.click('#addplot');
  await row.click();
  await page.locator('.plot.active input[data-field="c"]').check();
  await page.locator('.plot.active input[data-field="t"]').uncheck();
  await page.waitForFunction(() => document.querySelector('.plot.active').dataset.plotted === 'c',
    null, {timeout: 5000});
  check(await page.locator('.plot').count() === 2, 'two plots');
  await waitData(page, 'c');
  await page.waitForTimeout(1500);
  const [clo, chi] = await plotted(page, 'c');
  check(clo === -1 && chi === 1, `square wave extremes ${clo} .. ${chi}`);
  await page.screenshot({path: `${art}/web_two_plots.png`});

  if (mode === 'view') {
    check(await page.locator('.plot.active .setoff').count() === 1, 'read-only note missing');
    check(await page.locator('form.set').count() === 0, 'a set form without --allow-set');
    const st = await page.evaluate(async () => {
      const r = await fetch('/api/set', {method: 'POST',
        body: new URLSearchParams({c: 'quiet', a: 'b=1'})});
      return [r.status, (await r.json()).error];
    });
    check(st[0] === 403 && /--allow-set/.test(st[1]), `set without --allow-set: ${st}`);
  } else {
    // Refused on the live writer, with its pid, as ard set does.
    const form = page.locator('.plot.active form.set');
    await form.locator('input[name="k"]').fill('5');
    await form.locator('button').click();
    await page.waitForFunction(() =>
      document.querySelector('.plot.active .setmsg').textContent !== '', null, {timeout: 5000});
    const m1 = await form.locator('.setmsg').textContent();
    check(m1.includes(String(sigpid)), `set on a live writer: ${m1}`);
    // A value out of the field's range is refused with the cause.
    await page.locator('tr[data-conn="quiet"]').click();
    const q = page.locator('.plot.active form.set');
    await q.locator('input[name="b"]').waitFor({timeout: 5000});
    await q.locator('input[name="b"]').fill('99999999999');
    await q.locator('button').click();
    await page.waitForFunction(() =>
      document.querySelector('.plot.active .setmsg').textContent !== '', null, {timeout: 5000});
    const m2 = await q.locator('.setmsg').textContent();
    check(/b/.test(m2) && (await q.locator('.setmsg').getAttribute('class')).includes('err'),
      `out-of-range value: ${m2}`);
    await q.locator('input[name="b"]').fill('-7');
    await q.locator('button').click();
    await page.waitForFunction(() =>
      document.querySelector('.plot.active .setmsg').textContent === 'sent', null,
    {timeout: 5000});
    await page.screenshot({path: `${art}/web_set.png`});
  }
  check(errors.length === 0, `errors on the page: ${errors.join('; ')}`);
  await browser.close();
}

main().catch(e => {
  console.error('FAIL:', e.message);
  process.exit(1);
});
