/// What every page carries inline (nothing is loaded from anywhere): the style, with a dark
/// palette under `prefers-color-scheme: dark`, and on item pages a search box, the details
/// dialog and the one script that drives both. Without the script the search box stays hidden,
/// the dialog closed, and each image a link to its file.
extension Gallery {
    static let style = """
        :root{color-scheme:light dark;--bg:#f5f5f3;--fg:#1c1c1e;--muted:#6c6c72;--card:#fff;--line:#deded9;\
        --tile:#ebebe7;--accent:#0b5fc4;--bad:#b3261e;--badbg:#fdeceb;--wait:#7d5a00;--waitbg:#fff4d1}\
        @media (prefers-color-scheme:dark){:root{--bg:#141416;--fg:#e6e6e9;--muted:#9c9ca5;--card:#1e1e22;\
        --line:#313137;--tile:#28282d;--accent:#80b8ff;--bad:#ff8f86;--badbg:#3b1f1e;--wait:#f2c94c;--waitbg:#352d17}}\
        *{box-sizing:border-box}[hidden]{display:none!important}\
        body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1800px;padding:0 24px 24px;\
        color:var(--fg);background:var(--bg)}\
        a{color:var(--accent)}header{padding:18px 0 6px}h1{font-size:22px;margin:0 0 4px}\
        header p,nav,small,footer{color:var(--muted)}nav a{margin-right:.2em}footer{margin:24px 0 0}\
        h2{font-size:16px;margin:26px 0 10px;padding-bottom:5px;border-bottom:1px solid var(--line)}\
        h2 small{font-weight:normal}\
        .grid{list-style:none;margin:0;padding:0;display:grid;gap:14px;\
        grid-template-columns:repeat(auto-fill,minmax(150px,1fr))}\
        .grid li{background:var(--card);border:1px solid var(--line);border-radius:8px;overflow:hidden;min-width:0}\
        .grid a{display:block;color:inherit;text-decoration:none}.grid li:hover{border-color:var(--accent)}\
        .grid a:focus-visible{outline:3px solid var(--accent);outline-offset:-3px}\
        .grid img,.tile{display:block;width:100%;height:auto;aspect-ratio:1;object-fit:contain;background:var(--tile)}\
        .grid p{margin:0;padding:6px 9px 8px;font-size:12.5px;line-height:1.35}\
        .t{display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden}\
        .tile{padding:12px;font-size:12px;overflow:hidden;overflow-wrap:anywhere}\
        li.failed{border-color:var(--bad)}li.failed .tile{background:var(--badbg);color:var(--bad)}\
        li.failed .tile b{display:block;font-size:13px;margin-bottom:4px}\
        li.pending .tile{background:var(--waitbg);color:var(--wait);font-style:italic}\
        .covers{grid-template-columns:repeat(auto-fill,minmax(112px,1fr));gap:12px}\
        section.album{content-visibility:auto;contain-intrinsic-size:auto 1800px}\
        .covers span{display:block;padding:5px 8px 7px;font-size:12px;line-height:1.35}.covers b{display:block;font-size:13px}\
        .covers .tile{display:flex;align-items:center;justify-content:center;color:var(--muted)}\
        .search{margin:10px 0 0;display:flex;gap:10px;align-items:center}\
        .search input{font:inherit;padding:7px 11px;width:min(420px,100%);border:1px solid var(--line);\
        border-radius:7px;background:var(--card);color:var(--fg)}\
        table{border-collapse:collapse;width:100%}th{text-align:left;color:var(--muted)}\
        td{border-bottom:1px solid var(--line);padding:5px 8px;vertical-align:top}\
        td.id{color:var(--muted);white-space:nowrap}td.url{font-size:12px;overflow-wrap:anywhere;width:24em}\
        td.message{color:var(--bad);font-size:12px;overflow-wrap:anywhere}\
        dialog{border:0;border-radius:12px;padding:0;width:min(1100px,94vw);max-height:94vh;\
        background:var(--card);color:var(--fg);box-shadow:0 12px 48px #0009}dialog::backdrop{background:#000b}\
        dialog[open]{display:grid;grid-template-columns:minmax(0,3fr) minmax(280px,2fr)}\
        #d-pic{background:var(--tile);display:flex;align-items:center;justify-content:center;min-height:320px}\
        #d-pic img{display:block;max-width:100%;max-height:88vh}\
        #d-meta{padding:20px 24px;overflow:auto;overflow-wrap:anywhere}#d-meta h2{margin-top:0;border:0}\
        dl{display:grid;grid-template-columns:auto minmax(0,1fr);gap:6px 14px;margin:0 0 18px}\
        dt{color:var(--muted)}dd{margin:0}#d-sha{font:12px ui-monospace,monospace}\
        dialog button{font:inherit;padding:6px 12px;border:1px solid var(--line);border-radius:7px;\
        background:var(--bg);color:var(--fg);cursor:pointer}\
        @media (max-width:700px){body{padding:0 12px 12px}.grid{gap:10px;\
        grid-template-columns:repeat(auto-fill,minmax(130px,1fr))}dialog[open]{grid-template-columns:1fr}}
        """

    /// An item page's search box, hidden until the script shows it.
    static let searchBox = """
        <div class="search" id="search" role="search" hidden><input type="search" id="q" \
        placeholder="Search titles on this page" aria-label="Search titles on this page" autocomplete="off">\
        <output id="hits"></output></div>

        """

    /// The details dialog and the script of an item page. The script reads each image link's
    /// `data-` attributes (format, width, height, bytes, sha256, catalog URL, mirror URL) and sets
    /// them as text, never as markup; only an http(s) catalog URL becomes a link.
    static let itemPageEnd = """
        <dialog id="details" aria-labelledby="d-title"><div id="d-pic"></div><div id="d-meta">\
        <h2 id="d-title"></h2><dl><dt>id</dt><dd id="d-id"></dd><dt>format</dt><dd id="d-format"></dd>\
        <dt>dimensions</dt><dd id="d-size"></dd><dt>bytes</dt><dd id="d-bytes"></dd>\
        <dt>sha256</dt><dd id="d-sha"></dd><dt>catalog URL</dt><dd id="d-url"></dd>\
        <dt class="d-m">fetched from</dt><dd class="d-m" id="d-mirror"></dd></dl>\
        <p><button type="button" id="d-prev">← Previous</button> <button type="button" id="d-next">Next →</button> \
        <button type="button" id="d-close">Close</button></p><p><small>Arrow keys: previous and next; Escape closes.\
        </small></p></div></dialog>
        <script>
        (()=>{const $=i=>document.getElementById(i),d=$('details'),anchors=[...document.querySelectorAll('li.done>a')],
        pic=document.createElement('img');$('d-pic').append(pic);let at=-1;
        function show(i){const a=anchors[i],s=a.dataset,li=a.parentNode;at=i;
        pic.src=a.getAttribute('href');pic.alt=li.querySelector('.t').textContent;$('d-title').textContent=pic.alt;
        $('d-id').textContent=li.querySelector('small').textContent;$('d-format').textContent=s.f||'';
        $('d-size').textContent=s.w?s.w+' × '+s.h+' px':'not recorded';
        $('d-bytes').textContent=s.b?Number(s.b).toLocaleString('en')+' bytes':'not recorded';
        $('d-sha').textContent=s.s||'not recorded';const u=$('d-url'),url=s.u||'';u.textContent='';
        if(/^https?:\\/\\//i.test(url)){const l=document.createElement('a');l.href=url;l.rel='noreferrer';
        l.textContent=url;u.append(l)}else u.textContent=url;
        $('d-mirror').textContent=s.m||'';for(const e of d.querySelectorAll('.d-m'))e.hidden=!s.m;
        if(!d.open){d.showModal();$('d-next').focus()}}
        function step(by){for(let i=at+by;i>=0&&i<anchors.length;i+=by)if(!anchors[i].parentNode.hidden)return show(i)}
        document.addEventListener('click',e=>{const a=e.target.closest('li.done>a');
        if(!a||e.button||e.ctrlKey||e.metaKey||e.shiftKey||e.altKey)return;e.preventDefault();show(anchors.indexOf(a))});
        document.addEventListener('keydown',e=>{if(!d.open)return;if(e.key=='ArrowLeft'){e.preventDefault();step(-1)}
        else if(e.key=='ArrowRight'){e.preventDefault();step(1)}});
        d.addEventListener('click',e=>{if(e.target==d)d.close()});
        d.addEventListener('close',()=>{if(anchors[at])anchors[at].focus()});
        $('d-prev').onclick=()=>step(-1);$('d-next').onclick=()=>step(1);$('d-close').onclick=()=>d.close();
        const q=$('q'),items=[...document.querySelectorAll('main li')],
        titles=items.map(li=>li.querySelector('.t').textContent.toLowerCase());$('search').hidden=false;
        q.addEventListener('input',()=>{const words=q.value.toLowerCase().split(/\\s+/).filter(Boolean);let n=0;
        items.forEach((li,i)=>{const hit=words.every(w=>titles[i].includes(w));li.hidden=!hit;if(hit)n++});
        for(const s of document.querySelectorAll('main section'))s.hidden=!s.querySelector('li:not([hidden])');
        $('hits').textContent=words.length?n+' of '+items.length+' items':''})})();
        </script>

        """
}
