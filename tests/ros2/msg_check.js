// msg_check.js NPM_DIR DESCRIPTOR FILE.msg - parse a .msg file written by `ard ros2-msgs` with
// @foxglove/rosmsg (ROS 2 grammar) and compare its fields with the ardnet type descriptor
// ("name:kind[count] ..."): same names, types, array lengths, in order. Exit 0 if equal.
const [npmDir, desc, file] = process.argv.slice(2);
const { parse } = require(npmDir + '/node_modules/@foxglove/rosmsg');
const text = require('fs').readFileSync(file, 'utf8');
const kinds = { i8: 'int8', u8: 'uint8', i16: 'int16', u16: 'uint16', i32: 'int32',
                u32: 'uint32', i64: 'int64', u64: 'uint64', f32: 'float32', f64: 'float64' };
const want = desc.trim().split(/\s+/).map((f) => {
  const m = /^([a-z][a-z0-9_]*):([a-z0-9]+)(?:\[(\d+)\])?$/.exec(f);
  if (!m) throw new Error('test descriptor field ' + f);
  return { name: m[1], type: kinds[m[2]], isArray: m[3] !== undefined,
           arrayLength: m[3] === undefined ? undefined : Number(m[3]) };
});
const defs = parse(text, { ros2: true })[0].definitions.filter((d) => !d.isConstant);
const got = defs.map((d) => ({ name: d.name, type: d.type, isArray: !!d.isArray,
                               arrayLength: d.isArray ? d.arrayLength : undefined }));
if (JSON.stringify(got) !== JSON.stringify(want)) {
  console.error('fields differ:\n got  ' + JSON.stringify(got) + '\n want ' + JSON.stringify(want));
  process.exit(1);
}
console.log(file + ': ' + got.length + ' fields as the descriptor');
