//! TensorFlow Lite's C API, loaded at run time with `libloading`: nothing links against it at
//! build time, and a missing library is a [`WakeError`] naming the file and the fix.
//!
//! Only what a microWakeWord model needs: one int8 input tensor, one uint8 output tensor, and the
//! streaming state inside the interpreter (resource variables; a fresh [`Interpreter`] starts
//! from zero state).

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::WakeError;

/// The library's file name (as `scripts/fetch-models wake` stores it in the model directory).
pub const LIBRARY_NAME: &str = "libtensorflowlite_c.so";

/// `kTfLiteOk`.
const OK: c_int = 0;

#[repr(C)]
struct TfLiteModel {
    _private: [u8; 0],
}
#[repr(C)]
struct TfLiteInterpreter {
    _private: [u8; 0],
}
#[repr(C)]
struct TfLiteInterpreterOptions {
    _private: [u8; 0],
}
#[repr(C)]
struct TfLiteTensor {
    _private: [u8; 0],
}

type ModelCreateFromFile = unsafe extern "C" fn(*const c_char) -> *mut TfLiteModel;
type ModelDelete = unsafe extern "C" fn(*mut TfLiteModel);
type InterpreterCreate = unsafe extern "C" fn(
    *const TfLiteModel,
    *const TfLiteInterpreterOptions,
) -> *mut TfLiteInterpreter;
type InterpreterDelete = unsafe extern "C" fn(*mut TfLiteInterpreter);
type InterpreterStatus = unsafe extern "C" fn(*mut TfLiteInterpreter) -> c_int;
type GetInputTensor = unsafe extern "C" fn(*const TfLiteInterpreter, i32) -> *mut TfLiteTensor;
type GetOutputTensor = unsafe extern "C" fn(*const TfLiteInterpreter, i32) -> *const TfLiteTensor;
type TensorByteSize = unsafe extern "C" fn(*const TfLiteTensor) -> usize;
type CopyFromBuffer = unsafe extern "C" fn(*mut TfLiteTensor, *const c_void, usize) -> c_int;
type CopyToBuffer = unsafe extern "C" fn(*const TfLiteTensor, *mut c_void, usize) -> c_int;

/// The loaded library and the functions hearth calls. The pointers stay valid as long as
/// `_lib` is loaded, which is as long as this value lives (interpreters hold an `Arc` to it).
pub struct Library {
    path: PathBuf,
    model_create_from_file: ModelCreateFromFile,
    model_delete: ModelDelete,
    interpreter_create: InterpreterCreate,
    interpreter_delete: InterpreterDelete,
    allocate_tensors: InterpreterStatus,
    invoke: InterpreterStatus,
    get_input_tensor: GetInputTensor,
    get_output_tensor: GetOutputTensor,
    tensor_byte_size: TensorByteSize,
    copy_from_buffer: CopyFromBuffer,
    copy_to_buffer: CopyToBuffer,
    _lib: libloading::Library,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library").field("path", &self.path).finish()
    }
}

impl Library {
    /// Loads the library at `path` and looks up every function hearth calls.
    pub fn open(path: &Path) -> Result<Arc<Library>, WakeError> {
        let failed = |reason: String| WakeError::Library {
            path: path.to_path_buf(),
            reason,
        };
        if !path.is_file() {
            return Err(failed("no such file".into()));
        }
        // SAFETY: loading runs the library's initialisers. This is TensorFlow Lite's C library
        // (checked by sha256 when scripts/fetch-models stored it); its initialisers only set up
        // its own op registry and do not touch hearth's state.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| failed(e.to_string()))?;
        macro_rules! sym {
            ($name:literal, $ty:ty) => {{
                // SAFETY: `$ty` is the function's signature as declared in TensorFlow Lite's
                // c_api.h / c_api_types.h (2.17); the copied pointer is used only while `_lib`,
                // stored beside it, keeps the library loaded.
                let s = unsafe { lib.get::<$ty>($name.as_bytes()) }
                    .map_err(|e| failed(format!("{}: {e}", $name)))?;
                *s
            }};
        }
        let library = Library {
            path: path.to_path_buf(),
            model_create_from_file: sym!("TfLiteModelCreateFromFile", ModelCreateFromFile),
            model_delete: sym!("TfLiteModelDelete", ModelDelete),
            interpreter_create: sym!("TfLiteInterpreterCreate", InterpreterCreate),
            interpreter_delete: sym!("TfLiteInterpreterDelete", InterpreterDelete),
            allocate_tensors: sym!("TfLiteInterpreterAllocateTensors", InterpreterStatus),
            invoke: sym!("TfLiteInterpreterInvoke", InterpreterStatus),
            get_input_tensor: sym!("TfLiteInterpreterGetInputTensor", GetInputTensor),
            get_output_tensor: sym!("TfLiteInterpreterGetOutputTensor", GetOutputTensor),
            tensor_byte_size: sym!("TfLiteTensorByteSize", TensorByteSize),
            copy_from_buffer: sym!("TfLiteTensorCopyFromBuffer", CopyFromBuffer),
            copy_to_buffer: sym!("TfLiteTensorCopyToBuffer", CopyToBuffer),
            _lib: lib,
        };
        Ok(Arc::new(library))
    }

    /// Loads `libtensorflowlite_c.so` from `dir` (the model directory).
    pub fn in_dir(dir: &Path) -> Result<Arc<Library>, WakeError> {
        Library::open(&dir.join(LIBRARY_NAME))
    }

    /// Where the library was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A model and its interpreter, tensors allocated: one input tensor of `input_len` int8 values,
/// one output of one uint8. Dropping it deletes both.
pub(crate) struct Interpreter {
    lib: Arc<Library>,
    path: PathBuf,
    model: *mut TfLiteModel,
    interpreter: *mut TfLiteInterpreter,
    input_len: usize,
}

// SAFETY: the interpreter and model are owned by this value alone (no aliases escape), and
// TensorFlow Lite's interpreter may be used from any thread as long as calls are not concurrent,
// which `&mut self` on `invoke` guarantees. The library's function pointers are plain code.
unsafe impl Send for Interpreter {}

impl std::fmt::Debug for Interpreter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interpreter")
            .field("path", &self.path)
            .field("input_len", &self.input_len)
            .finish()
    }
}

impl Interpreter {
    /// Loads the model at `path` and allocates its tensors. Fails unless the model has an input
    /// tensor and a one-byte output.
    pub fn new(lib: &Arc<Library>, path: &Path) -> Result<Interpreter, WakeError> {
        let failed = |reason: String| WakeError::Model {
            path: path.to_path_buf(),
            reason,
        };
        if !path.is_file() {
            return Err(failed("no such file".into()));
        }
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| failed("the path contains a NUL byte".into()))?;
        // SAFETY: `c_path` is a NUL-terminated string that outlives the call; the function copies
        // or maps the file and returns an owned model or null.
        let model = unsafe { (lib.model_create_from_file)(c_path.as_ptr()) };
        if model.is_null() {
            return Err(failed("TensorFlow Lite cannot read it as a model".into()));
        }
        // SAFETY: `model` is a live model from TfLiteModelCreateFromFile; null options mean the
        // defaults. The interpreter does not take ownership of the model (deleted in Drop, after
        // the interpreter).
        let interpreter = unsafe { (lib.interpreter_create)(model, std::ptr::null()) };
        // From here on Drop deletes whatever was created, on every error path.
        let mut this = Interpreter {
            lib: Arc::clone(lib),
            path: path.to_path_buf(),
            model,
            interpreter,
            input_len: 0,
        };
        if interpreter.is_null() {
            return Err(failed(
                "TensorFlow Lite cannot build an interpreter for it".into(),
            ));
        }
        // SAFETY: `interpreter` is live and not null (checked above).
        let status = unsafe { (lib.allocate_tensors)(interpreter) };
        if status != OK {
            return Err(failed(format!("allocating its tensors failed ({status})")));
        }
        let (input, output) = this.tensors();
        if input.is_null() || output.is_null() {
            return Err(failed("it has no input or no output tensor".into()));
        }
        // SAFETY: both tensors are live (not null, owned by the live interpreter).
        let (input_len, output_len) = unsafe {
            (
                (lib.tensor_byte_size)(input),
                (lib.tensor_byte_size)(output),
            )
        };
        if input_len == 0 || output_len != 1 {
            return Err(failed(format!(
                "its tensors are {input_len} bytes in, {output_len} out, not a microWakeWord model \
                 (int8 features in, one uint8 probability out)"
            )));
        }
        this.input_len = input_len;
        Ok(this)
    }

    /// Bytes (int8 values) the input tensor takes per [`invoke`](Self::invoke).
    pub(crate) fn input_len(&self) -> usize {
        self.input_len
    }

    /// Input tensor 0 and output tensor 0 (null if the model has none).
    fn tensors(&self) -> (*mut TfLiteTensor, *const TfLiteTensor) {
        // SAFETY: `self.interpreter` is live and not null (checked in `new` before this is
        // called); index 0 is answered with null when out of range.
        unsafe {
            (
                (self.lib.get_input_tensor)(self.interpreter, 0),
                (self.lib.get_output_tensor)(self.interpreter, 0),
            )
        }
    }

    /// Runs the model on one input (exactly [`input_len`](Self::input_len) values) and returns
    /// the raw output byte. The model's streaming state advances.
    pub fn invoke(&mut self, input: &[i8]) -> Result<u8, WakeError> {
        let failed = |reason: String| WakeError::Invoke {
            path: self.path.clone(),
            reason,
        };
        if input.len() != self.input_len {
            return Err(failed(format!(
                "{} input values given, the model takes {}",
                input.len(),
                self.input_len
            )));
        }
        let (in_tensor, out_tensor) = self.tensors();
        // SAFETY: the tensor is live; `input` is valid for `input.len()` bytes, which equals the
        // tensor's byte size (checked above), and the library only reads it.
        let status =
            unsafe { (self.lib.copy_from_buffer)(in_tensor, input.as_ptr().cast(), input.len()) };
        if status != OK {
            return Err(failed(format!("copying the input failed ({status})")));
        }
        // SAFETY: the interpreter is live with tensors allocated; `&mut self` rules out a
        // concurrent call.
        let status = unsafe { (self.lib.invoke)(self.interpreter) };
        if status != OK {
            return Err(failed(format!("invoke failed ({status})")));
        }
        let mut out = 0u8;
        // SAFETY: the output tensor is live and 1 byte (checked in `new`); `out` is a writable
        // byte that outlives the call.
        let status =
            unsafe { (self.lib.copy_to_buffer)(out_tensor, (&mut out as *mut u8).cast(), 1) };
        if status != OK {
            return Err(failed(format!("copying the output failed ({status})")));
        }
        Ok(out)
    }
}

impl Drop for Interpreter {
    fn drop(&mut self) {
        // SAFETY: both pointers were returned by the library, are owned by this value alone and
        // are deleted once, here: the interpreter first (it refers to the model), then the
        // model. Delete functions accept null.
        unsafe {
            (self.lib.interpreter_delete)(self.interpreter);
            (self.lib.model_delete)(self.model);
        }
    }
}
