function [log, info] = ard_load(file, varargin)
  % LOG = ard_load(FILE) reads an ardnet recording (MCAP, written by `ard record`) into a
  %   struct with one field per connection (its name made a valid field name: 'arm.state'
  %   becomes arm_state). Each is a struct with
  %     name, type   the connection's name and type descriptor
  %     t            receive time of each packet, seconds since the recording's first packet
  %     log_ns, real_ns, seq   receive time and writer's send time (int64 ns since the epoch),
  %                  sequence number (uint64), one row per packet
  %     <field>      one field per descriptor field, one row per packet (an array field
  %                  f64[7] is an N-by-7 matrix), in the field's class (double, int32, ...);
  %                  unnamed fields are f0, f1, ...; a field named like one of the columns
  %                  above gets a trailing '_'; an opaque connection has one uint8 matrix 'data'.
  % LOG = ard_load(FILE, 'rate', HZ) resamples every connection onto one time base: t runs
  %   from the first packet of the recording to its last in steps of 1/HZ.
  % LOG = ard_load(FILE, 'time', T) resamples onto the times T (seconds, as t).
  %   Resampling holds the latest value, as a reader of the connection would have seen it:
  %   row k is the newest packet received at or before T(k); before a connection's first
  %   packet, floating fields are NaN, integer fields and seq 0, and the added logical column
  %   'valid' is false there.
  % [LOG, INFO] = ard_load(...) also returns file, start_ns, end_ns, messages, complete.
  % Errors: ardnet:ARD_ESTALE (not a recording, or damaged: the message names the offset),
  %   ardnet:ARD_ESYS (cannot read the file).
  if nargin < 1 || mod (numel (varargin), 2) ~= 0
    % (not print_usage: MATLAB has none)
    error ('ardnet:ARD_EINVAL', 'ARD_EINVAL: usage: ard_load(FILE), ard_load(FILE, ''rate'', HZ), ard_load(FILE, ''time'', T)');
  end
  [log, info] = ardnet_mex ('load', file);
  T = [];
  for i = 1:2:numel (varargin)
    switch varargin{i}
      case 'rate'
        hz = double (varargin{i + 1});
        if ~isscalar (hz) || ~(hz > 0)
          error ('ardnet:ARD_EINVAL', 'ARD_EINVAL: ard_load: rate must be a positive scalar');
        end
        T = (0:floor (double (info.end_ns - info.start_ns) * 1e-9 * hz + 1e-9))' / hz;
      case 'time'
        T = double (varargin{i + 1}(:));
      otherwise
        error ('ardnet:ARD_EINVAL', 'ARD_EINVAL: ard_load: unknown option ''%s''', varargin{i});
    end
  end
  if isempty (T) && numel (varargin) == 0
    return;
  end
  names = fieldnames (log);
  for c = 1:numel (names)
    log.(names{c}) = hold_latest (log.(names{c}), T);
  end
end

function s = hold_latest(s, T)
  % idx(k): how many packets have t <= T(k) (a stable sort puts packets before equal times).
  n = numel (s.t);
  [~, order] = sort ([s.t; T]);
  isdata = order <= n;
  cnt = cumsum (isdata);
  idx = zeros (numel (T), 1);
  idx(order(~isdata) - n) = cnt(~isdata);
  valid = idx > 0;
  for f = fieldnames (s)'
    f = f{1};
    if any (strcmp (f, {'name', 'type', 't'}))
      continue;
    end
    v = s.(f);
    if isfloat (v)
      out = nan (numel (T), size (v, 2), class (v));
    else
      out = zeros (numel (T), size (v, 2), class (v));
    end
    out(valid, :) = v(idx(valid), :);
    s.(f) = out;
  end
  s.t = T;
  s.valid = valid;
end
