//! Textures and samplers for the interpreter: what a sampler register `s#` is bound to and
//! how a texel is fetched and filtered, following the Direct3D 9 sampler states
//! (`D3DSAMP_ADDRESSU/V/W`, `D3DSAMP_MINFILTER`/`MAGFILTER`/`MIPFILTER`, `BORDERCOLOR`).
//!
//! Texels are float RGBA; a caller with an 8-bit format converts before binding. Texel
//! centres are at `(i + 0.5) / size`, as in every Direct3D version (only *pixel* centres
//! moved between D3D9 and D3D10).

use std::sync::Arc;

/// The shape of a texture, as `dcl_2d`, `dcl_cube` and `dcl_volume` declare samplers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextureKind {
    TwoD,
    /// Six square faces in D3D9's order +X, −X, +Y, −Y, +Z, −Z (`D3DCUBEMAP_FACES`).
    Cube,
    Volume,
}

/// A texture: mip levels of float RGBA texels, level 0 first. Each level holds `depth`
/// slices (6 faces for a cube) of `height` rows of `width` texels, the size of level `n`
/// being the level-0 size halved `n` times (at least 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Texture {
    pub kind: TextureKind,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub levels: Vec<Vec<[f32; 4]>>,
}

impl Texture {
    /// A one-level 2D texture, texels row by row; `None` when there are not exactly
    /// `width × height` of them.
    pub fn two_d(width: u32, height: u32, texels: Vec<[f32; 4]>) -> Option<Texture> {
        (width > 0 && height > 0 && texels.len() as u64 == width as u64 * height as u64).then(
            || Texture {
                kind: TextureKind::TwoD,
                width,
                height,
                depth: 1,
                levels: vec![texels],
            },
        )
    }

    /// The size of `level` (width, height, depth).
    pub fn level_size(&self, level: usize) -> (u32, u32, u32) {
        let shrink = |n: u32| (n >> level.min(31)).max(1);
        let depth = match self.kind {
            TextureKind::Cube => 6,
            TextureKind::TwoD => 1,
            TextureKind::Volume => shrink(self.depth),
        };
        (shrink(self.width), shrink(self.height), depth)
    }

    /// Whether every level holds as many texels as its size says.
    pub fn is_consistent(&self) -> bool {
        !self.levels.is_empty()
            && self.levels.iter().enumerate().all(|(i, l)| {
                let (w, h, d) = self.level_size(i);
                l.len() as u64 == w as u64 * h as u64 * d as u64
            })
    }

    fn texel(&self, level: usize, x: u32, y: u32, z: u32) -> [f32; 4] {
        let (w, h, _) = self.level_size(level);
        let i = (z as usize * h as usize + y as usize) * w as usize + x as usize;
        self.levels[level].get(i).copied().unwrap_or([0.0; 4])
    }
}

/// `D3DTEXTUREFILTERTYPE`, as far as the interpreter filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    Point,
    Linear,
}

/// `D3DTEXTUREADDRESS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Address {
    Wrap,
    Mirror,
    Clamp,
    Border,
    MirrorOnce,
}

/// A sampler register's texture and states. The defaults are Direct3D 9's: wrap in every
/// direction, point minification and magnification, no mipmapping (`D3DTEXF_NONE`, level
/// 0 only), a black transparent border.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampler {
    pub texture: Arc<Texture>,
    pub min_filter: Filter,
    pub mag_filter: Filter,
    /// `None`: `D3DTEXF_NONE`, only level 0 is read.
    pub mip_filter: Option<Filter>,
    pub address: [Address; 3],
    pub border: [f32; 4],
}

impl Sampler {
    /// `texture` with Direct3D 9's default states.
    pub fn new(texture: Texture) -> Sampler {
        Sampler {
            texture: Arc::new(texture),
            min_filter: Filter::Point,
            mag_filter: Filter::Point,
            mip_filter: None,
            address: [Address::Wrap; 3],
            border: [0.0; 4],
        }
    }

    /// Samples at `coords` (normalised; a direction for a cube) with level of detail
    /// `lod` (log2 of texels per pixel; `≤ 0` magnifies).
    pub fn sample(&self, coords: [f32; 4], lod: f32) -> [f32; 4] {
        let t = &*self.texture;
        if t.width == 0 || t.height == 0 || t.depth == 0 || t.levels.is_empty() {
            // Nothing to read: what an unbound sampler gives.
            return [0.0, 0.0, 0.0, 1.0];
        }
        let (u, v, w, face) = match t.kind {
            TextureKind::Cube => {
                let (face, u, v) = cube_face(coords);
                (u, v, 0.0, face)
            }
            TextureKind::TwoD => (coords[0], coords[1], 0.0, 0),
            TextureKind::Volume => (coords[0], coords[1], coords[2], 0),
        };
        let filter = if lod > 0.0 {
            self.min_filter
        } else {
            self.mag_filter
        };
        let last = t.levels.len().saturating_sub(1) as f32;
        let lod = if lod.is_nan() { 0.0 } else { lod };
        match self.mip_filter {
            None => self.sample_level(0, filter, u, v, w, face),
            Some(Filter::Point) => {
                let level = (lod.max(0.0) + 0.5).floor().min(last) as usize;
                self.sample_level(level, filter, u, v, w, face)
            }
            Some(Filter::Linear) => {
                let l = lod.clamp(0.0, last);
                let (a, f) = (l.floor(), l - l.floor());
                let lo = self.sample_level(a as usize, filter, u, v, w, face);
                if f == 0.0 {
                    return lo;
                }
                let hi =
                    self.sample_level((a as usize + 1).min(last as usize), filter, u, v, w, face);
                std::array::from_fn(|i| lo[i] + (hi[i] - lo[i]) * f)
            }
        }
    }

    fn sample_level(
        &self,
        level: usize,
        filter: Filter,
        u: f32,
        v: f32,
        w: f32,
        face: u32,
    ) -> [f32; 4] {
        let t = &*self.texture;
        let (width, height, depth) = t.level_size(level);
        let volume = t.kind == TextureKind::Volume;
        let fetch = |x: i64, y: i64, z: i64| -> [f32; 4] {
            let (Some(x), Some(y)) = (
                address(self.address[0], x, width),
                address(self.address[1], y, height),
            ) else {
                return self.border;
            };
            let z = if volume {
                match address(self.address[2], z, depth) {
                    Some(z) => z,
                    None => return self.border,
                }
            } else {
                face
            };
            t.texel(level, x, y, z)
        };
        match filter {
            Filter::Point => {
                let x = (u * width as f32).floor() as i64;
                let y = (v * height as f32).floor() as i64;
                let z = (w * depth as f32).floor() as i64;
                fetch(x, y, z)
            }
            Filter::Linear => {
                let (x0, fx) = split(u * width as f32 - 0.5);
                let (y0, fy) = split(v * height as f32 - 0.5);
                let (z0, fz) = if volume {
                    split(w * depth as f32 - 0.5)
                } else {
                    (0, 0.0)
                };
                let mut out = [0.0f32; 4];
                for (dz, wz) in [(0, 1.0 - fz), (1, fz)] {
                    if wz == 0.0 {
                        continue;
                    }
                    for (dy, wy) in [(0, 1.0 - fy), (1, fy)] {
                        for (dx, wx) in [(0, 1.0 - fx), (1, fx)] {
                            let weight = wx * wy * wz;
                            if weight == 0.0 {
                                continue;
                            }
                            let texel = fetch(x0 + dx, y0 + dy, z0 + dz);
                            for (o, t) in out.iter_mut().zip(texel) {
                                *o += weight * t;
                            }
                        }
                    }
                }
                out
            }
        }
    }
}

/// Integer part (floored) and fraction of a texel-space coordinate.
fn split(x: f32) -> (i64, f32) {
    if !x.is_finite() {
        return (0, 0.0);
    }
    let f = x.floor();
    (f as i64, x - f)
}

/// The texel index `i` names in a level `size` texels across, or `None` for the border.
fn address(mode: Address, i: i64, size: u32) -> Option<u32> {
    let n = size as i64;
    let mirror = |i: i64| {
        let period = i.rem_euclid(2 * n);
        if period < n {
            period
        } else {
            2 * n - 1 - period
        }
    };
    Some(match mode {
        Address::Wrap => i.rem_euclid(n),
        Address::Mirror => mirror(i),
        Address::Clamp => i.clamp(0, n - 1),
        Address::Border => {
            if i < 0 || i >= n {
                return None;
            }
            i
        }
        Address::MirrorOnce => {
            let m = if i < 0 { -1 - i } else { i };
            m.clamp(0, n - 1)
        }
    } as u32)
}

/// The cube face a direction points at and the normalised coordinates on it, as D3D9
/// selects them (the major axis; ties go to z, then y).
fn cube_face(c: [f32; 4]) -> (u32, f32, f32) {
    let [x, y, z, _] = c;
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let (face, sc, tc, ma) = if az >= ax && az >= ay {
        if z >= 0.0 {
            (4, x, -y, az)
        } else {
            (5, -x, -y, az)
        }
    } else if ay >= ax {
        if y >= 0.0 {
            (2, x, z, ay)
        } else {
            (3, x, -z, ay)
        }
    } else if x >= 0.0 {
        (0, -z, -y, ax)
    } else {
        (1, z, -y, ax)
    };
    (face, (sc / ma + 1.0) * 0.5, (tc / ma + 1.0) * 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checker() -> Sampler {
        let texels = vec![
            [1.0, 0.0, 0.0, 1.0],
            [0.0, 1.0, 0.0, 1.0],
            [0.0, 0.0, 1.0, 1.0],
            [1.0, 1.0, 1.0, 1.0],
        ];
        Sampler::new(Texture::two_d(2, 2, texels).unwrap())
    }

    #[test]
    fn point_sampling_picks_the_texel_under_the_coordinate() {
        let s = checker();
        assert_eq!(s.sample([0.25, 0.25, 0.0, 0.0], 0.0), [1.0, 0.0, 0.0, 1.0]);
        assert_eq!(s.sample([0.75, 0.25, 0.0, 0.0], 0.0), [0.0, 1.0, 0.0, 1.0]);
        assert_eq!(s.sample([0.25, 0.75, 0.0, 0.0], 0.0), [0.0, 0.0, 1.0, 1.0]);
        // Wrap: 1.25 is 0.25 again.
        assert_eq!(s.sample([1.25, 0.25, 0.0, 0.0], 0.0), [1.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn linear_sampling_blends_neighbours_and_addressing_decides_the_edges() {
        let mut s = checker();
        s.mag_filter = Filter::Linear;
        // Half way between the two texels of the top row.
        assert_eq!(s.sample([0.5, 0.25, 0.0, 0.0], 0.0), [0.5, 0.5, 0.0, 1.0]);
        // At u = 0 wrap blends with the right column, clamp does not.
        assert_eq!(s.sample([0.0, 0.25, 0.0, 0.0], 0.0), [0.5, 0.5, 0.0, 1.0]);
        s.address = [Address::Clamp; 3];
        assert_eq!(s.sample([0.0, 0.25, 0.0, 0.0], 0.0), [1.0, 0.0, 0.0, 1.0]);
        s.address = [Address::Border; 3];
        s.border = [0.0, 0.0, 0.0, 0.0];
        assert_eq!(s.sample([0.0, 0.25, 0.0, 0.0], 0.0), [0.5, 0.0, 0.0, 0.5]);
    }

    #[test]
    fn mirror_and_cube_faces() {
        assert_eq!(address(Address::Mirror, -1, 4), Some(0));
        assert_eq!(address(Address::Mirror, 4, 4), Some(3));
        assert_eq!(address(Address::Mirror, 5, 4), Some(2));
        assert_eq!(address(Address::MirrorOnce, 9, 4), Some(3));
        assert_eq!(address(Address::Wrap, -1, 4), Some(3));
        assert_eq!(cube_face([1.0, 0.0, 0.0, 0.0]), (0, 0.5, 0.5));
        assert_eq!(cube_face([0.0, 0.0, -2.0, 0.0]).0, 5);
        assert_eq!(cube_face([0.0, -1.0, 0.5, 0.0]), (3, 0.5, 0.25));
    }

    #[test]
    fn mip_levels_follow_the_level_of_detail() {
        let texture = Texture {
            kind: TextureKind::TwoD,
            width: 2,
            height: 2,
            depth: 1,
            levels: vec![vec![[1.0; 4]; 4], vec![[0.0; 4]]],
        };
        assert!(texture.is_consistent());
        let mut s = Sampler::new(texture);
        assert_eq!(
            s.sample([0.5, 0.5, 0.0, 0.0], 1.0),
            [1.0; 4],
            "no mip filter"
        );
        s.mip_filter = Some(Filter::Point);
        assert_eq!(s.sample([0.5, 0.5, 0.0, 0.0], 1.0), [0.0; 4]);
        s.mip_filter = Some(Filter::Linear);
        assert_eq!(s.sample([0.5, 0.5, 0.0, 0.0], 0.25), [0.75; 4]);
    }
}
